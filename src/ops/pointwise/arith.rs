//! Binary arithmetic beyond add/sub/mul: `alpha=` forms, the division
//! family, remainders, powers, atan2 and NaN-propagating maximum/minimum.

use super::math::Num;
use super::{
    check_divisor, check_inplace, float_of, fusable, num, promoted, scalar_factor, unsupported,
    zero_where,
};
use crate::autograd::{
    check_write, derivatives, inplace, BackwardCtx, Grads, SavedValue, Tangents,
};
use crate::kernels::formulas;
use crate::kernels::fused::{grad3, pow_scalar_grad, Grad3};
use crate::kernels::half::half_map2;
use crate::kernels::iter::{apply2, map2, map2_blocks, Run};
use crate::ops::binary::{inplace_operand, promote2, sum1_fresh};
use crate::ops::Arith;
use crate::tensor::FloatOps;
use crate::{dispatch_float, dispatch_numeric, DType, Element, Error, Result, Scalar, Tensor};

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

derivatives! {
    table FORMULAS("pointwise arithmetic: alpha forms, division, remainders, powers, atan2, maximum/minimum") for Tensor;

    /// `add(other, alpha=alpha)`: `self + alpha * other`.
    pub fn add_scaled(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        before {
            if alpha == Scalar::Int(1) {
                return self.add(other);
            };
        }
        record "AddBackward0", [self, other];
        compute {
            let (dt, a, b) = promote2(self, other);
        } => out = crate::dispatch_arith!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            map2::<T, T, T>(&a, &b, move |x, y| T::add_scaled(x, k, y))
        }, else {
            let k: bool = scalar_factor("alpha", alpha, dt)?;
            map2::<bool, bool, bool>(&a, &b, move |x, y| x | (k & y))
        })?;
        save nothing
        backward |ctx, g| Ok(vec![
            Some(g[0].clone()),
            ctx.needs(1).then(|| g[0].mul(&num(alpha))).transpose()?,
        ]);
        forward elementwise(|t| sum1_fresh(t, |i, t| if i == 0 {
            Ok(t.clone())
        } else {
            t.mul(&num(alpha))
        }));
        batched broadcast;
    }

    /// `sub(other, alpha=alpha)`: `self - alpha * other` (not for bool).
    pub fn sub_scaled(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        before {
            if alpha == Scalar::Int(1) {
                return self.sub(other);
            };
        }
        record "SubBackward0", [self, other];
        compute {
            let (dt, a, b) = promote2(self, other);
        } => out = crate::dispatch_arith!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            map2::<T, T, T>(&a, &b, move |x, y| T::sub_scaled(x, k, y))
        }, else Err(bool_sub_error()))?;
        save nothing
        backward |ctx, g| Ok(vec![
            Some(g[0].clone()),
            ctx.needs(1).then(|| g[0].mul(&num(alpha))?.neg()).transpose()?,
        ]);
        forward elementwise(|t| sum1_fresh(t, |i, t| if i == 0 {
            Ok(t.clone())
        } else {
            t.mul(&num(alpha))?.neg()
        }));
        batched broadcast;
    }

    /// `rsub(other, alpha=alpha)`: `other - alpha * self` (what `number -
    /// tensor` computes). torch records `RsubBackward1` with no edge for a
    /// Python-number `other` (a Scalar), `RsubBackward0` for a tensor.
    pub fn rsub_scaled(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        record if other.is_wrapped_number() { "RsubBackward1" } else { "RsubBackward0" },
            [self, other];
        configure |r| if other.is_wrapped_number() { r.scalar_input(1) } else { r };
        // The recorder turned recording off: this computes the value only.
        compute => out = other.sub_scaled(self, alpha)?;
        save |s| {
            s.attr("alpha", SavedValue::from(alpha));
        }
        backward |ctx, g| Ok(vec![
            ctx.needs(0).then(|| g[0].mul(&num(alpha))?.neg()).transpose()?,
            Some(g[0].clone()),
        ]);
        forward elementwise(|t| sum1_fresh(t, |i, t| if i == 0 {
            t.mul(&num(alpha))?.neg()
        } else {
            Ok(t.clone())
        }));
        batched broadcast;
    }

    /// `div(other)` (alias `true_divide`): true division; integer and bool
    /// inputs divide as the default float dtype.
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        record "DivBackward0", [self, other];
        compute {
            let dt = float_of(promoted(&[self, other]));
            let (a, b) = (self.to_dtype(dt), other.to_dtype(dt));
        } => out = match half_map2(&a, &b, |x, y| x / y) {
            Some(r) => r,
            None => dispatch_float!(dt, T => map2::<T, T, T>(&a, &b, |x, y| x / y),
                else crate::dispatch_complex!(dt, T => map2::<T, T, T>(&a, &b, |x, y| x / y),
                    else Err(unsupported("div", dt)))),
        }?;
        save |s, needs| {
            s.save_opt("self", needs[1].then_some(self));
            s.save("other", other);
        }
        backward |ctx, g| {
            // Complex operands take the conjugate derivatives (conj is a
            // no-op for real ones).
            let other = ctx.saved(1)?.conj()?;
            // d(a/b)/db = -a / b^2, computed as -(a / b) / b for stable
            // higher derivatives (as torch).
            let d_other = match ctx.saved_opt(0)? {
                Some(a) if fusable(&[&g[0], &a, &other]) => {
                    Some(grad3(Grad3::DivOther, &g[0], &a, &other)?)
                }
                Some(a) => Some(formulas::div_other(&g[0], &a.conj()?, &other)?),
                None => None,
            };
            let d_self = ctx.needs(0).then(|| g[0].div(&other)).transpose()?;
            Ok(vec![d_self, d_other])
        };
        // d(a/b) = da / b - db * (a / b) / b
        forward elementwise(|t| t.sum1(|i, t| if i == 0 {
            t.div(other)
        } else {
            t.mul(&out)?.div(other)?.neg()
        }));
        batched broadcast;
        inplace div_(self; other) |s| s.div(other); {
            check_inplace("div_", self, float_of(promoted(&[self, other])))?;
            let b = other.to_dtype(self.dtype());
        } => dispatch_float!(self.dtype(), T => apply2::<T, T>(self, &b, |x, y| x / y),
            else crate::dispatch_complex!(self.dtype(), T => apply2::<T, T>(self, &b, |x, y| x / y),
                else Err(unsupported("div_", self.dtype()))));
    }

    /// `div(other, rounding_mode=...)`: `None` is true division; `Trunc` and
    /// `Floor` keep the promoted dtype (integers raise on a zero divisor).
    pub fn div_mode(&self, other: &Tensor, mode: Option<RoundingMode>) -> Result<Tensor> {
        before {
            let Some(mode) = mode else {
                return self.div(other);
            };
        }
        record "DivBackward2", [self, other];
        compute => out = match mode {
            RoundingMode::Trunc => self.binary_num::<DivTrunc>("div_trunc", other),
            RoundingMode::Floor => self.binary_num::<FloorDiv>("div_floor", other),
        }?;
        save nothing
        // A rounded quotient is piecewise constant: zero gradients.
        backward |ctx, g| {
            let zero = |i| ctx.needs(i).then(|| g[0].zeros_like()).transpose();
            Ok(vec![zero(0)?, zero(1)?])
        };
        forward formula(|_| Ok(vec![None]));
        batched broadcast;
    }

    /// `floor_divide(other)` (`//`): quotient rounded toward -inf.
    /// Like torch, it has no derivative: backward through it raises.
    pub fn floor_divide(&self, other: &Tensor) -> Result<Tensor> {
        record "NotImplemented", [self, other];
        compute => out = self.binary_num::<FloorDiv>("floor_divide", other)?;
        save nothing
        backward |ctx, g| Err(floor_divide_error());
        forward formula(|_| Err(floor_divide_error()));
        batched broadcast;
        inplace floor_divide_(self; other) |s| s.floor_divide(other);
            => self.binary_num_::<FloorDiv>("floor_divide_", other);
    }

    /// `remainder(other)` (`%`): remainder with the divisor's sign.
    pub fn remainder(&self, other: &Tensor) -> Result<Tensor> {
        record if other.is_wrapped_number() { "RemainderBackward0" } else { "RemainderBackward1" },
            [self, other];
        configure |r| if other.is_wrapped_number() { r.scalar_input(1) } else { r };
        compute => out = self.binary_num::<Remainder>("remainder", other)?;
        save |s, needs| {
            s.save_opt("self", needs[1].then_some(self));
            s.save_opt("other", needs[1].then_some(other));
        }
        backward |ctx, g| modulo_grads(ctx, &g[0], RoundingMode::Floor);
        forward elementwise(|t| modulo_tangent(t, self, other, RoundingMode::Floor));
        batched broadcast;
        inplace remainder_(self; other) |s| s.remainder(other);
            => self.binary_num_::<Remainder>("remainder_", other);
    }

    /// `fmod(other)`: remainder with the dividend's sign.
    pub fn fmod(&self, other: &Tensor) -> Result<Tensor> {
        record if other.is_wrapped_number() { "FmodBackward0" } else { "FmodBackward1" },
            [self, other];
        configure |r| if other.is_wrapped_number() { r.scalar_input(1) } else { r };
        compute => out = self.binary_num::<Fmod>("fmod", other)?;
        save |s, needs| {
            s.save_opt("self", needs[1].then_some(self));
            s.save_opt("other", needs[1].then_some(other));
        }
        backward |ctx, g| modulo_grads(ctx, &g[0], RoundingMode::Trunc);
        forward elementwise(|t| modulo_tangent(t, self, other, RoundingMode::Trunc));
        batched broadcast;
        inplace fmod_(self; other) |s| s.fmod(other);
            => self.binary_num_::<Fmod>("fmod_", other);
    }

    /// `maximum(other)`: elementwise max; NaN if either is NaN.
    /// Where both are equal, each gets half the gradient.
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        record "MaximumBackward0", [self, other];
        compute => out = self.binary_num::<Maximum>("maximum", other)?;
        save |s| {
            s.save("self", self);
            s.save("other", other);
        }
        backward |ctx, g| extremum_grads(ctx, &g[0], Tensor::lt);
        forward elementwise(|t| extremum_tangent(t, self, other, Tensor::lt));
        batched broadcast;
    }

    /// `minimum(other)`: elementwise min; NaN if either is NaN. Where both
    /// are equal, each gets half the gradient.
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        record "MinimumBackward0", [self, other];
        compute => out = self.binary_num::<Minimum>("minimum", other)?;
        save |s| {
            s.save("self", self);
            s.save("other", other);
        }
        backward |ctx, g| extremum_grads(ctx, &g[0], Tensor::gt);
        forward elementwise(|t| extremum_tangent(t, self, other, Tensor::gt));
        batched broadcast;
    }

    /// `pow(exponent)`: `self ** exponent`. An integer result with a
    /// negative Python-number exponent raises, as torch.
    pub fn pow(&self, exponent: &Tensor) -> Result<Tensor> {
        before {
            // torch's overloads: pow(Tensor, Scalar), pow(Scalar, Tensor) and
            // pow(Tensor, Tensor); a Scalar gets no edge.
            let (name, scalar) = if exponent.is_wrapped_number() {
                ("PowBackward0", Some(1))
            } else if self.is_wrapped_number() {
                ("PowBackward2", Some(0))
            } else {
                ("PowBackward1", None)
            };
        }
        record name, [self, exponent];
        configure |r| match scalar {
            Some(i) => r.scalar_input(i),
            None => r,
        };
        compute {
            check_int_pow(promoted(&[self, exponent]), exponent)?;
        } => out = self.binary_num::<Pow>("pow", exponent)?;
        save |s, needs| {
            for (name, t, i) in [("self", self, 0), ("exponent", exponent, 1)] {
                if scalar == Some(i) {
                    s.save_scalar(name, t);
                } else {
                    s.save(name, t);
                }
            }
            s.save_output_if(needs[1], "result", &out, 0);
        }
        backward |ctx, g| {
            // Complex values take the conjugate derivatives: the formulas
            // evaluated at the conjugates (conj is a no-op for reals).
            let (base, exp) = (ctx.saved(0)?.conj()?, ctx.saved(1)?.conj()?);
            let d_self = if ctx.needs(0) {
                Some(pow_grad_base(&g[0], &base, &exp)?)
            } else {
                None
            };
            let d_exp = match ctx.saved_opt(2)? {
                Some(y) => Some(pow_grad_exp(&g[0], &base, &exp, &y.conj()?)?),
                None => None,
            };
            Ok(vec![d_self, d_exp])
        };
        forward elementwise(|t| t.sum1(|i, t| if i == 0 {
            pow_grad_base(t, self, exponent)
        } else {
            pow_grad_exp(t, self, exponent, &out)
        }));
        batched broadcast;
        inplace pow_(self; exponent) |s| s.pow(exponent); {
            check_int_pow(self.dtype(), exponent)?;
        } => self.binary_num_::<Pow>("pow_", exponent);
    }

    /// `atan2(other)` (alias `arctan2`): angle of the point (other, self).
    pub fn atan2(&self, other: &Tensor) -> Result<Tensor> {
        record "Atan2Backward0", [self, other];
        compute {
            let dt = float_of(promoted(&[self, other]));
            let (a, b) = (self.to_dtype(dt), other.to_dtype(dt));
        } => out = dispatch_float!(dt, T => map2::<T, T, T>(&a, &b, |y, x| y.atan2(x)),
            else Err(unsupported("atan2", dt)))?;
        save |s| {
            s.save("self", self);
            s.save("other", other);
        }
        // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
        backward |ctx, g| {
            let (y, x) = (ctx.saved(0)?, ctx.saved(1)?);
            if fusable(&[&g[0], &y, &x]) {
                let one = |i, f| ctx.needs(i).then(|| grad3(f, &g[0], &y, &x)).transpose();
                return Ok(vec![one(0, Grad3::Atan2Y)?, one(1, Grad3::Atan2X)?]);
            }
            let r2 = formulas::atan2_r2(&y, &x)?;
            let d_y = ctx.needs(0).then(|| formulas::atan2_y(&g[0], &x, &r2)).transpose()?;
            let d_x = ctx.needs(1).then(|| formulas::atan2_x(&g[0], &y, &r2)).transpose()?;
            Ok(vec![d_y, d_x])
        };
        forward elementwise(|t| {
            let r2 = formulas::atan2_r2(self, other)?;
            t.sum1(|i, t| if i == 0 {
                formulas::atan2_y(t, other, &r2)
            } else {
                formulas::atan2_x(t, self, &r2)
            })
        });
        // The formula broadcasts over a leading batch dim of `g`.
        batched broadcast;
        inplace atan2_(self; other) |s| s.atan2(other); {
            check_inplace("atan2_", self, float_of(promoted(&[self, other])))?;
            let b = other.to_dtype(self.dtype());
        } => dispatch_float!(self.dtype(), T => apply2::<T, T>(self, &b, |y, x| y.atan2(x)),
            else Err(unsupported("atan2_", self.dtype())));
    }
}

// In-place forms that are not a row's generated one: `alpha == 1` and
// `rounding_mode=None` hand off to another op's in-place form before any
// autograd check, and autograd errors name the op torch names (`add_`,
// `sub_`, `div_`).
impl Tensor {
    /// In-place form of [`Tensor::add_scaled`].
    pub fn add_scaled_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        crate::autograd::captured!(add_scaled_ (&self, other: &Tensor, alpha: Scalar) -> () {
            if alpha == Scalar::Int(1) {
                return self.add_(other);
            }
            let _span = crate::trace::inplace_op("aten::add_", self, &[other]);
            if inplace("add_", self, &[other], |s| s.add_scaled(other, alpha))? {
                return Ok(());
            }
            let b = inplace_operand("add_", self, other)?;
            let dt = self.dtype();
            crate::dispatch_arith!(dt, T => {
                let k: T = scalar_factor("alpha", alpha, dt)?;
                apply2::<T, T>(self, &b, move |x, y| T::add_scaled(x, k, y))
            }, else {
                let k: bool = scalar_factor("alpha", alpha, dt)?;
                apply2::<bool, bool>(self, &b, move |x, y| x | (k & y))
            })
        })
    }

    /// `sub_(other)`: in place.
    pub fn sub_(&self, other: &Tensor) -> Result<()> {
        self.sub_scaled_(other, Scalar::Int(1))
    }

    /// In-place form of [`Tensor::sub_scaled`].
    pub fn sub_scaled_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        crate::autograd::captured!(sub_scaled_ (&self, other: &Tensor, alpha: Scalar) -> () {
            let _span = crate::trace::inplace_op("aten::sub_", self, &[other]);
            if inplace("sub_", self, &[other], |s| s.sub_scaled(other, alpha))? {
                return Ok(());
            }
            let b = inplace_operand("sub_", self, other)?;
            let dt = self.dtype();
            crate::dispatch_arith!(dt, T => {
                let k: T = scalar_factor("alpha", alpha, dt)?;
                if alpha == Scalar::Int(1) {
                    apply2::<T, T>(self, &b, T::sub)
                } else {
                    apply2::<T, T>(self, &b, move |x, y| T::sub_scaled(x, k, y))
                }
            }, else Err(bool_sub_error()))
        })
    }

    /// `mul_(other)`: in place (bool: logical and).
    pub fn mul_(&self, other: &Tensor) -> Result<()> {
        crate::autograd::captured!(mul_ (&self, other: &Tensor) -> () {
            let _span = crate::trace::inplace_op("aten::mul_", self, &[other]);
            if inplace("mul_", self, &[other], |s| s.mul(other))? {
                return Ok(());
            }
            let b = inplace_operand("mul_", self, other)?;
            crate::dispatch_arith!(self.dtype(), T => apply2::<T, T>(self, &b, T::mul),
                else apply2::<bool, bool>(self, &b, |x, y| x & y))
        })
    }

    /// In-place form of [`Tensor::div_mode`].
    pub fn div_mode_(&self, other: &Tensor, mode: Option<RoundingMode>) -> Result<()> {
        crate::autograd::captured!(div_mode_ (&self, other: &Tensor, mode: Option<RoundingMode>) -> () {
            if mode.is_some() && inplace("div_", self, &[other], |s| s.div_mode(other, mode))? {
                return Ok(());
            }
            match mode {
                None => self.div_(other),
                Some(RoundingMode::Trunc) => self.binary_num_::<DivTrunc>("div_trunc_", other),
                Some(RoundingMode::Floor) => self.binary_num_::<FloorDiv>("div_floor_", other),
            }
        })
    }
}

/// The gradients of `self mod other = self - other * q`, with the quotient
/// `q` rounded by `mode` (floor: remainder, trunc: fmod): `d/dself = 1`,
/// `d/dother = -q` (q is piecewise constant). `self` and `other` are saved
/// only when `other` needs a gradient.
fn modulo_grads(ctx: &BackwardCtx, g: &Tensor, mode: RoundingMode) -> Result<Grads> {
    let d_other = match (ctx.saved_opt(0)?, ctx.saved_opt(1)?) {
        (Some(a), Some(b)) => Some(g.mul(&a.div_mode(&b, Some(mode))?)?.neg()?),
        _ => None,
    };
    Ok(vec![Some(g.clone()), d_other])
}

/// The tangent of `a mod b` (see [`modulo_grads`]): `da - db * q`.
fn modulo_tangent(
    t: &Tangents,
    a: &Tensor,
    b: &Tensor,
    mode: RoundingMode,
) -> Result<Vec<Option<Tensor>>> {
    sum1_fresh(t, |i, t| {
        if i == 0 {
            Ok(t.clone())
        } else {
            t.mul(&a.div_mode(b, Some(mode))?)?.neg()
        }
    })
}

/// The gradients of maximum/minimum from the saved `self` and `other`:
/// each input gets the gradient where it won, half of it where they tie.
/// `loses(a, b)` says where `a` lost (`lt` for maximum, `gt` for minimum).
fn extremum_grads(
    ctx: &BackwardCtx,
    g: &Tensor,
    loses: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Grads> {
    let (a, b) = (ctx.saved(0)?, ctx.saved(1)?);
    let tie = a.eq(&b)?;
    let split = g.r#where(&tie.logical_not(), &g.mul(&num(0.5))?)?;
    let d_a = ctx
        .needs(0)
        .then(|| zero_where(&split, &loses(&a, &b)?))
        .transpose()?;
    let d_b = ctx
        .needs(1)
        .then(|| zero_where(&split, &loses(&b, &a)?))
        .transpose()?;
    Ok(vec![d_a, d_b])
}

/// The tangent of maximum/minimum, the transpose of [`extremum_grads`]:
/// each tangent where its input won, half of each where they tie.
fn extremum_tangent(
    t: &Tangents,
    a: &Tensor,
    b: &Tensor,
    loses: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Vec<Option<Tensor>>> {
    let tie = a.eq(b)?;
    t.sum1(|i, t| {
        let split = t.r#where(&tie.logical_not(), &t.mul(&num(0.5))?)?;
        let lost = if i == 0 { loses(a, b)? } else { loses(b, a)? };
        zero_where(&split, &lost)
    })
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
        if fusable(&[g, base]) {
            // The scalars cast to the gradient's dtype, as the ops below
            // cast them (Note [Fused backward]).
            let dt = g.dtype();
            return pow_scalar_grad(g, base, &exp.to_dtype(dt), &minus_one.to_dtype(dt));
        }
        return formulas::pow_base_scalar(g, base, exp, &minus_one);
    }
    if fusable(&[g, base, exp]) {
        return grad3(Grad3::PowBase, g, base, exp);
    }
    formulas::pow_base(g, base, exp)
}

/// `d(a^b)/db = a^b * log(a)` (`y` is `a^b`), taken as 0 where `a == 0`
/// and `b >= 0` (the limit from the right).
fn pow_grad_exp(g: &Tensor, base: &Tensor, exp: &Tensor, y: &Tensor) -> Result<Tensor> {
    let base = base.to_dtype(y.dtype());
    let at_zero = base.eq(&num(0.0))?.logical_and(&exp.ge(&num(0.0))?)?;
    zero_where(&g.mul(&y.mul(&base.log()?)?)?, &at_zero)
}

/// `x^y` for complex numbers: exact repeated products for small integer
/// exponents (so `z ** 2` is `z * z`), `exp(y log x)` otherwise, with
/// `x^0 = 1` and `0^y = 0` for `Re(y) > 0`.
fn complex_pow<C: Element>(x: C, y: C) -> C {
    let (x, y) = (x.to_complex(), y.to_complex());
    let r = if y.im == 0.0 && y.re == y.re.trunc() && y.re.abs() <= 64.0 {
        x.powi(y.re as i32)
    } else if y == crate::Complex::new(0.0, 0.0) {
        crate::Complex::new(1.0, 0.0)
    } else if x == crate::Complex::new(0.0, 0.0) && y.re > 0.0 {
        x
    } else {
        x.powc(y)
    };
    C::from_complex(r)
}

/// torch's error for a binary op complex numbers do not have.
fn complex_binary_error(name: &str, dt: DType) -> Error {
    let op = name.trim_end_matches('_');
    match op {
        "maximum" | "minimum" => {
            Error::runtime(format!("{op} not implemented for complex tensors."))
        }
        "floor_divide" => unsupported("div_floor_cpu", dt),
        _ => unsupported(&format!("{op}_cpu"), dt),
    }
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

/// A block kernel of one float type over two operand runs.
type Block<T> = fn(Run<'_, T>, Run<'_, T>, &mut [T]);

/// A binary op with per-dtype semantics from [`Num`]: its math, what bool
/// tensors do (`None`: raise as torch), whether an integer zero divisor
/// must be refused, and optional vectorised float32 and float64 forms.
trait NumOp {
    const BOOL: Option<fn(bool, bool) -> bool> = None;
    const DIVIDES: bool = false;
    /// Vectorised float32 and float64 forms over contiguous runs, giving
    /// the same bits as `apply::<f32>` and `apply::<f64>`.
    const BLOCKS: Option<(Block<f32>, Block<f64>)> = None;
    fn apply<T: Num>(a: T, b: T) -> T;
}

macro_rules! num_ops {
    ($($op:ident: $f:ident $(, divides: $div:expr)? $(, bool: $b:expr)? $(, blocks: $v:expr)?;)*) => {
        $(
            struct $op;
            impl NumOp for $op {
                $(const DIVIDES: bool = $div;)?
                $(const BOOL: Option<fn(bool, bool) -> bool> = Some($b);)?
                $(const BLOCKS: Option<(Block<f32>, Block<f64>)> = Some($v);)?
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
    Pow: power, blocks: (crate::kernels::vmath::pow_block::<f32>, crate::kernels::vmath::pow_block::<f64>);
}

impl Tensor {
    fn binary_num<K: NumOp>(&self, name: &str, other: &Tensor) -> Result<Tensor> {
        let (dt, a, b) = promote2(self, other);
        if K::DIVIDES {
            check_divisor(dt, &b)?;
        }
        match (dt, K::BLOCKS) {
            (DType::Float32, Some((block, _))) => {
                return map2_blocks::<f32>(&a, &b, K::apply::<f32>, block)
            }
            (DType::Float64, Some((_, block))) => {
                // Strided float64 operands are copied first: the body one
                // element at a time is bound by its dependent chain (ten
                // times the copy), where the block overlaps elements.
                let dense = |t: Tensor| if t.is_contiguous() { t } else { t.copy() };
                return map2_blocks::<f64>(&dense(a), &dense(b), K::apply::<f64>, block);
            }
            _ => {}
        }
        if dt.is_complex() {
            return match name {
                "pow" => {
                    crate::dispatch_complex!(dt, C => map2::<C, C, C>(&a, &b, complex_pow::<C>),
                    else Err(unsupported(name, dt)))
                }
                _ => Err(complex_binary_error(name, dt)),
            };
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
        if dt.is_complex() {
            return match name {
                "pow_" => {
                    crate::dispatch_complex!(dt, C => apply2::<C, C>(self, &b, complex_pow::<C>),
                    else Err(unsupported(name, dt)))
                }
                _ => Err(complex_binary_error(name, dt)),
            };
        }
        if let (DType::Float64, Some(_)) = (dt, K::BLOCKS) {
            // The vectorised body into a fresh tensor, then copied in.
            let r = self.binary_num::<K>(name, &b)?;
            return apply2::<f64, f64>(self, &r, |_, v| v);
        }
        dispatch_numeric!(dt, T => apply2::<T, T>(self, &b, K::apply::<T>),
        else match K::BOOL {
            Some(g) => apply2::<bool, bool>(self, &b, g),
            None => Err(unsupported(name, dt)),
        })
    }
}
