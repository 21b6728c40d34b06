//! Binary float functions with derivatives (hypot, logaddexp, logaddexp2,
//! xlogy, xlog1py, copysign, the Hurwitz zeta function and the regularized
//! incomplete gamma functions), the non-differentiable `nextafter`, and the
//! integer functions gcd, lcm and the bit shifts.

use super::{check_inplace, float_of, num, promoted, unsupported, zero_where};
use crate::autograd::{check_write, derivatives};
use crate::kernels::iter::{apply2, map2};
use crate::kernels::special as sp;
use crate::ops::binary::{inplace_operand, promote2};
use crate::{dispatch_float, dispatch_int, DType, Element, Error, Result, Tensor};

/// Defines float-valued binary ops and their in-place forms, one row each of
/// the table `$table`. A row reads: its doc, the op and its in-place form,
/// the element function of `$x` and `$y` (computed in float64 and rounded
/// to the result's dtype), the node, and the derivatives with respect to
/// `self` and `other`, written with tensor ops over the output gradient
/// `$g`, the inputs `$a`, `$b` and the result `$out` (the forward formula
/// is the same expression with the tangent in place of `$g`).
macro_rules! float_binary {
    ($table:ident($family:literal);
     $($doc:literal $name:ident $name_:ident => |$x:ident, $y:ident| $f:expr,
       $node:literal => |$g:ident, $a:ident, $b:ident, $out:ident|
       self: $da:expr, other: $db:expr;)*) => {
        derivatives! {
            table $table($family) for Tensor;
            $(
                #[doc = $doc]
                pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                    record $node, [self, other];
                    compute {
                        let dt = float_of(promoted(&[self, other]));
                        let (a, b) = (self.to_dtype(dt), other.to_dtype(dt));
                    } => out = dispatch_float!(dt, T => map2::<T, T, T>(&a, &b, |x, y| {
                        let ($x, $y) = (x.to_f64(), y.to_f64());
                        T::from_f64($f)
                    }), else Err(unsupported(stringify!($name), dt)))?;
                    save |s| {
                        s.save("self", self);
                        s.save("other", other);
                        s.save_output("result", &out, 0);
                    }
                    backward |ctx, g| {
                        let ($g, $a, $b, $out) =
                            (&g[0], &ctx.saved(0)?, &ctx.saved(1)?, &ctx.saved(2)?);
                        let _ = ($a, $b, $out);
                        let d_self = if ctx.needs(0) { Some($da) } else { None };
                        let d_other = if ctx.needs(1) { Some($db) } else { None };
                        Ok(vec![d_self, d_other])
                    };
                    forward elementwise(|t| t.sum1(|i, t| {
                        let ($g, $a, $b, $out) = (t, self, other, &out);
                        let _ = ($a, $b, $out);
                        Ok(if i == 0 { $da } else { $db })
                    }));
                    // Elementwise formulas broadcast over a batch dim.
                    batched broadcast;
                    inplace $name_(self; other) |s| s.$name(other); {
                        check_inplace(stringify!($name_), self, float_of(promoted(&[self, other])))?;
                        let b = other.to_dtype(self.dtype());
                    } => dispatch_float!(self.dtype(), T => apply2::<T, T>(self, &b, |x, y| {
                        let ($x, $y) = (x.to_f64(), y.to_f64());
                        T::from_f64($f)
                    }), else Err(unsupported(stringify!($name_), self.dtype())));
                }
            )*
        }
    };
}

float_binary! {
    FORMULAS("binary float functions: hypot, logaddexp, logaddexp2, xlogy, xlog1py, copysign, zeta, igamma");
    "`hypot(other)`: `sqrt(self^2 + other^2)` without overflow or underflow."
    hypot hypot_ => |x, y| x.hypot(y),
        "HypotBackward0" => |g, a, b, out|
        self: g.mul(&a.div(out)?)?,
        other: g.mul(&b.div(out)?)?;
    "`logaddexp(other)`: `log(exp(self) + exp(other))` without overflow."
    logaddexp logaddexp_ => |x, y| log_add_exp(x, y, f64::exp, f64::ln_1p, 1.0),
        "LogaddexpBackward0" => |g, a, b, out|
        self: g.div(&b.sub(a)?.exp()?.add(&num(1.0))?)?,
        other: g.div(&a.sub(b)?.exp()?.add(&num(1.0))?)?;
    "`logaddexp2(other)`: `log2(2^self + 2^other)` without overflow."
    logaddexp2 logaddexp2_ => |x, y| log_add_exp(x, y, f64::exp2, f64::ln_1p, std::f64::consts::LN_2),
        "Logaddexp2Backward0" => |g, a, b, out|
        self: g.div(&b.sub(a)?.exp2()?.add(&num(1.0))?)?,
        other: g.div(&a.sub(b)?.exp2()?.add(&num(1.0))?)?;
    "`xlogy(other)`: `self * log(other)`, 0 where `self` is 0 (unless `other` is NaN)."
    xlogy xlogy_ => |x, y| x_log(x, y, f64::ln),
        "XlogyBackward0" => |g, a, b, out|
        // log(other), taken as 0 where both are 0 (as torch).
        self: g.mul(&a.ne(&num(0.0))?.logical_or(&b.ne(&num(0.0))?)?.xlogy(b)?)?,
        other: g.mul(&a.div(b)?)?;
    "`xlog1py(other)`: `self * log1p(other)`, 0 where `self` is 0 (unless `other` is NaN)."
    xlog1py xlog1py_ => |x, y| x_log(x, y, f64::ln_1p),
        "SpecialXlog1PyBackward0" => |g, a, b, out|
        // log1p(other), taken as 0 where self is 0 and other is -1 (as torch).
        self: g.mul(&a.ne(&num(0.0))?.logical_or(&b.ne(&num(-1.0))?)?.xlog1py(b)?)?,
        other: g.mul(&a.div(&b.add(&num(1.0))?)?)?;
    "`copysign(other)`: the magnitude of `self` with the sign of `other`."
    copysign copysign_ => |x, y| x.copysign(y),
        "CopysignBackward0" => |g, a, b, out|
        // d|a| sign(b) / da is out / a away from a = 0, where torch takes 0.
        self: zero_where(&g.mul(&out.div(a)?)?, &a.eq(&num(0.0))?)?,
        other: g.zeros_like()?;
    "`special_zeta(other)`: the Hurwitz zeta function `zeta(self, other)`."
    special_zeta special_zeta_ => |x, y| sp::zeta(x, y),
        "SpecialZetaBackward0" => |g, a, b, out|
        self: no_derivative("zeta")?,
        other: g.mul(&a.neg()?.mul(&a.add(&num(1.0))?.special_zeta(b)?)?)?;
    "`igamma(other)`: the regularized lower incomplete gamma function `P(self, other)`."
    igamma igamma_ => |x, y| sp::gammainc(x, y),
        "IgammaBackward0" => |g, a, b, out|
        self: no_derivative("igamma: input")?,
        other: g.mul(&gamma_density(a, b)?)?;
    "`igammac(other)`: the regularized upper incomplete gamma function `Q(self, other)`."
    igammac igammac_ => |x, y| sp::gammaincc(x, y),
        "IgammacBackward0" => |g, a, b, out|
        self: no_derivative("igammac: input")?,
        other: g.mul(&gamma_density(a, b)?.neg()?)?;
}

/// torch's error for a derivative it does not define.
fn no_derivative(what: &str) -> Result<Tensor> {
    Err(Error::not_implemented_msg(format!(
        "the derivative for '{what}' is not implemented."
    )))
}

/// `x^(a-1) e^-x / Gamma(a)`: the derivative of `P(a, x)` in `x`.
fn gamma_density(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    let log = a
        .sub(&num(1.0))?
        .mul(&x.log()?)?
        .sub(x)?
        .sub(&a.lgamma()?)?;
    log.exp()
}

/// `log_base(base^x + base^y)` as `max + log1p(base^-|x - y|) / ln(base)`:
/// exact at equal infinities, NaN when either is NaN.
fn log_add_exp(x: f64, y: f64, pow: fn(f64) -> f64, log1p: fn(f64) -> f64, ln_base: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y && x.is_infinite() {
        return x;
    }
    let m = x.max(y);
    m + log1p(pow(-(x - y).abs())) / ln_base
}

/// `x * log(y)` with `0 * log(anything but NaN) = 0`.
fn x_log(x: f64, y: f64, log: fn(f64) -> f64) -> f64 {
    if y.is_nan() {
        f64::NAN
    } else if x == 0.0 {
        0.0
    } else {
        x * log(y)
    }
}

impl Tensor {
    /// `nextafter(other)`: the next float after `self` toward `other`, in
    /// the promoted float32 or float64 dtype. Not differentiable (torch
    /// defines no derivative): the result never requires grad.
    pub fn nextafter(&self, other: &Tensor) -> Result<Tensor> {
        let _span = crate::trace::op("aten::nextafter", &[self, other]);
        let (dt, a, b) = promote2(self, other);
        match dt {
            DType::Float32 => map2::<f32, f32, f32>(&a, &b, next_after32),
            DType::Float64 => map2::<f64, f64, f64>(&a, &b, next_after64),
            _ => Err(unsupported("nextafter", dt)),
        }
    }

    /// In-place form of [`Tensor::nextafter`].
    pub fn nextafter_(&self, other: &Tensor) -> Result<()> {
        crate::autograd::captured!(nextafter_ (&self, other: &Tensor) -> () {
            check_write(self)?;
            let b = inplace_operand("nextafter_", self, other)?;
            match self.dtype() {
                DType::Float32 => apply2::<f32, f32>(self, &b, next_after32),
                DType::Float64 => apply2::<f64, f64>(self, &b, next_after64),
                dt => Err(unsupported("nextafter_", dt)),
            }
        })
    }
}

macro_rules! next_after {
    ($name:ident, $t:ty) => {
        fn $name(x: $t, y: $t) -> $t {
            if x.is_nan() || y.is_nan() {
                <$t>::NAN
            } else if x == y {
                y
            } else if y > x {
                x.next_up()
            } else {
                x.next_down()
            }
        }
    };
}
next_after!(next_after32, f32);
next_after!(next_after64, f64);

/// The integer element functions: gcd, lcm and shifts with torch's
/// results for shift amounts outside `0..bits` (0, or -1 for a negative
/// value shifted right).
trait IntFns: Copy + Sized {
    fn gcd(self, o: Self) -> Self;
    fn lcm(self, o: Self) -> Self;
    fn shl(self, by: Self) -> Self;
    fn shr(self, by: Self) -> Self;
}

macro_rules! int_fns {
    ($($t:ty: $abs:path),*) => {$(
        // `< 0` is always false for u8.
        #[allow(unused_comparisons)]
        impl IntFns for $t {
            fn gcd(self, o: $t) -> $t {
                let (mut a, mut b) = (self, o);
                while b != 0 {
                    (a, b) = (b, a.wrapping_rem(b));
                }
                $abs(a)
            }
            fn lcm(self, o: $t) -> $t {
                let g = self.gcd(o);
                if g == 0 {
                    0
                } else {
                    $abs((self / g).wrapping_mul(o))
                }
            }
            fn shl(self, by: $t) -> $t {
                if by < 0 || by as u64 >= <$t>::BITS as u64 {
                    0
                } else {
                    self.wrapping_shl(by as u32)
                }
            }
            fn shr(self, by: $t) -> $t {
                if by < 0 || by as u64 >= <$t>::BITS as u64 {
                    if self < 0 { !0 } else { 0 }
                } else {
                    self.wrapping_shr(by as u32)
                }
            }
        }
    )*};
}
fn same(v: u8) -> u8 {
    v
}
int_fns!(u8: same, i8: i8::wrapping_abs, i16: i16::wrapping_abs, i32: i32::wrapping_abs, i64: i64::wrapping_abs);

/// Defines integer-only binary ops (not differentiable) and their
/// in-place forms.
macro_rules! int_binary {
    ($($doc:literal $name:ident $name_:ident => $f:ident;)*) => {
        impl Tensor {
            $(
                #[doc = $doc]
                pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                    let _span = crate::trace::op(concat!("aten::", stringify!($name)), &[self, other]);
                    let (dt, a, b) = promote2(self, other);
                    dispatch_int!(dt, T => map2::<T, T, T>(&a, &b, <T as IntFns>::$f),
                        else Err(unsupported(concat!(stringify!($name), "_cpu"), dt)))
                }

                #[doc = concat!("In-place form of `", stringify!($name), "`.")]
                pub fn $name_(&self, other: &Tensor) -> Result<()> {
                    check_write(self)?;
                    let dt = self.dtype();
                    let b = inplace_operand(stringify!($name_), self, other)?;
                    dispatch_int!(dt, T => apply2::<T, T>(self, &b, <T as IntFns>::$f),
                        else Err(unsupported(concat!(stringify!($name_), "_cpu"), dt)))
                }
            )*
        }
    };
}

int_binary! {
    "`gcd(other)`: greatest common divisor (non-negative) of integer tensors." gcd gcd_ => gcd;
    "`lcm(other)`: least common multiple (non-negative) of integer tensors." lcm lcm_ => lcm;
    "`bitwise_left_shift(other)` (`<<`) of integer tensors." bitwise_left_shift bitwise_left_shift_ => shl;
    "`bitwise_right_shift(other)` (`>>`, arithmetic) of integer tensors." bitwise_right_shift bitwise_right_shift_ => shr;
}
