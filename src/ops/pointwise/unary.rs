//! Unary pointwise ops: float functions, dtype-preserving numeric ops,
//! predicates (isnan...) and logical/bitwise not.

use super::math::Num;
use super::{assign, check_inplace, float_of, fusable, num, unsupported};
use crate::autograd::{check_write, derivatives, inplace};
use crate::kernels::formulas;
use crate::kernels::fused::{grad2, Grad2};
use crate::kernels::iter::{apply1, map1};
use crate::kernels::pointwise::{float_apply, float_map, FloatFn};
use crate::tensor::FloatOps;
use crate::{dispatch, dispatch_float, dispatch_numeric, DType, Element, Error, Result, Tensor};

/// Saves what a unary op's backward reads: its input (`self`) or its
/// output (`result`).
macro_rules! save_unary {
    ($s:ident, self, $x:expr, $out:expr) => {
        $s.save("self", $x)
    };
    ($s:ident, result, $x:expr, $out:expr) => {
        $s.save_output("result", $out, 0)
    };
}

/// The value a unary op's formula reads, for its forward formula: the
/// input (`self`), the output (`result`) or nothing (`none`).
macro_rules! jvp_value {
    (self, $x:expr, $out:expr) => {
        $x
    };
    (result, $x:expr, $out:expr) => {
        $out
    };
    (none, $x:expr, $out:expr) => {
        ()
    };
}

/// Defines float-valued unary ops and their in-place forms, one row each of
/// the table `FORMULAS_FLOAT`. `$kernel` names the function's kernel
/// ([`FloatFn`]); integer and bool inputs are computed in the default float
/// dtype. The backward reads the saved `self` or `result` as `$v` and the
/// output gradient as `$g`; `fused F` names the one-pass kernel
/// [`Grad2::F`] that computes the same formula when no graph is being built
/// (Note [Fused backward]).
macro_rules! float_unary {
    ($table:ident($family:literal);
     $($(#[binding($how:ident)])? $doc:literal $name:ident $name_:ident $(| $alias:ident $alias_:ident)*
       => $kernel:ident,
       $node:literal $saved:ident $(, fused $fz:ident)? => |$g:ident, $v:ident| $grad:expr;)*) => {
        crate::autograd::derivatives! {
            table $table($family) for Tensor;
            $(
                #[doc = $doc]
                pub fn $name(&self) -> Result<Tensor> {
                    record $node, [self];
                    compute {
                        let dt = float_of(self.dtype());
                    } => out = float_map(FloatFn::$kernel, self, dt)
                        .ok_or_else(|| unsupported(stringify!($name), dt))?;
                    save |s| { save_unary!(s, $saved, self, &out); }
                    backward |ctx, g| {
                        // A complex input takes `g * conj(f'(z))`, and
                        // `conj(f'(z)) = f'(conj z)` for these functions
                        // (real Taylor coefficients): conjugate the saved
                        // value, keep the formula.
                        let ($g, $v) = (&g[0], &ctx.saved(0)?.conj()?);
                        $(if fusable(&[$g, $v]) {
                            return Ok(vec![Some(grad2(Grad2::$fz, $g, $v)?)]);
                        })?
                        Ok(vec![Some($grad)])
                    };
                    // The derivative is diagonal: the forward formula is the
                    // backward one with the tangent in place of `g`.
                    forward formula(|t| t.map1(|$g| {
                        let $v = &jvp_value!($saved, self, &out);
                        Ok($grad)
                    }));
                    // Elementwise formulas broadcast over a batch dim.
                    batched broadcast;
                    inplace $name_(self) |s| s.$name(); {
                        check_inplace(stringify!($name_), self, float_of(self.dtype()))?;
                    } => float_apply(FloatFn::$kernel, self)
                        .unwrap_or_else(|| Err(unsupported(stringify!($name_), self.dtype())));
                }
            )*
        }
    };
}

/// `2 / sqrt(pi)`, the scale of erf's derivative `2/sqrt(pi) * exp(-x^2)`.
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// The rows of the table `FORMULAS_FLOAT`, handed to `$callback`: this
/// module's `float_unary!`, which makes each row's op, and the Python
/// binding's generator of Tensor methods. A row reads: its one-line doc, the
/// op and its in-place form, any aliases (`| arcsin arcsin_`, Python names
/// only), the `FloatFn` kernel, then the node, what it saves and the
/// derivative. `#[binding(by_hand)]` before a row keeps it out of the
/// generated Python methods (the binding writes that one itself).
#[doc(hidden)]
#[macro_export]
macro_rules! float_unary_rows {
    ($callback:ident) => {
        $callback! {
            FORMULAS_FLOAT("unary float functions: sqrt, exp, log, trigonometric, erf...");
            "Square root of each element (NaN below zero)."
            sqrt sqrt_ => Sqrt,
                "SqrtBackward0" result, fused Sqrt => |g, y| formulas::sqrt(g, y)?;
            "Reciprocal square root of each element, ``1 / sqrt(x)``."
            rsqrt rsqrt_ => Rsqrt,
                "RsqrtBackward0" result, fused Rsqrt => |g, y| formulas::rsqrt(g, y)?;
            "Exponential of each element, ``e ** x``."
            exp exp_ => Exp,
                "ExpBackward0" result => |g, y| g.mul(y)?;
            "Base-2 exponential of each element, ``2 ** x``."
            exp2 exp2_ => Exp2,
                "Exp2Backward0" result, fused Exp2 => |g, y| formulas::exp2(g, y)?;
            "``exp(x) - 1`` for each element, accurate for small ``x``."
            expm1 expm1_ => Expm1,
                "Expm1Backward0" result, fused Expm1 => |g, y| formulas::expm1(g, y)?;
            "Natural logarithm of each element."
            log log_ => Log,
                "LogBackward0" self => |g, x| g.div(x)?;
            "``log(1 + x)`` for each element, accurate for small ``x``."
            log1p log1p_ => Log1p,
                "Log1PBackward0" self, fused Log1p => |g, x| formulas::log1p(g, x)?;
            "Base-2 logarithm of each element."
            log2 log2_ => Log2,
                "Log2Backward0" self, fused Log2 => |g, x| formulas::log2(g, x)?;
            "Base-10 logarithm of each element."
            log10 log10_ => Log10,
                "Log10Backward0" self, fused Log10 => |g, x| formulas::log10(g, x)?;
            "Sine of each element (in radians)."
            sin sin_ => Sin,
                "SinBackward0" self => |g, x| g.mul(&x.cos()?)?;
            "Cosine of each element (in radians)."
            cos cos_ => Cos,
                "CosBackward0" self => |g, x| g.mul(&x.sin()?.neg()?)?;
            "Tangent of each element (in radians)."
            tan tan_ => Tan,
                "TanBackward0" result, fused Tan => |g, y| formulas::tan(g, y)?;
            "Inverse sine of each element."
            asin asin_ | arcsin arcsin_ => Asin,
                "AsinBackward0" self, fused Asin => |g, x| formulas::asin(g, x)?;
            "Inverse cosine of each element."
            acos acos_ | arccos arccos_ => Acos,
                "AcosBackward0" self, fused Acos => |g, x| formulas::acos(g, x)?;
            "Inverse tangent of each element."
            atan atan_ | arctan arctan_ => Atan,
                "AtanBackward0" self, fused Atan => |g, x| formulas::atan(g, x)?;
            "Hyperbolic sine of each element."
            sinh sinh_ => Sinh,
                "SinhBackward0" self => |g, x| g.mul(&x.cosh()?)?;
            "Hyperbolic cosine of each element."
            cosh cosh_ => Cosh,
                "CoshBackward0" self => |g, x| g.mul(&x.sinh()?)?;
            "Hyperbolic tangent of each element."
            tanh tanh_ => Tanh,
                "TanhBackward0" result, fused Tanh => |g, y| formulas::tanh(g, y)?;
            "Inverse hyperbolic sine of each element."
            asinh asinh_ | arcsinh arcsinh_ => Asinh,
                "AsinhBackward0" self, fused Asinh => |g, x| formulas::asinh(g, x)?;
            "Inverse hyperbolic cosine of each element."
            acosh acosh_ | arccosh arccosh_ => Acosh,
                "AcoshBackward0" self, fused Acosh => |g, x| formulas::acosh(g, x)?;
            "Inverse hyperbolic tangent of each element."
            atanh atanh_ | arctanh arctanh_ => Atanh,
                "AtanhBackward0" self, fused Atanh => |g, x| formulas::atanh(g, x)?;
            "Logistic sigmoid of each element, ``1 / (1 + exp(-x))``."
            sigmoid sigmoid_ => Sigmoid,
                "SigmoidBackward0" result, fused Sigmoid => |g, y| formulas::sigmoid(g, y)?;
            "Gauss error function of each element."
            erf erf_ => Erf,
                "ErfBackward0" self => |g, x| g.mul(&x.mul(x)?.neg()?.exp()?.mul(&num(TWO_OVER_SQRT_PI))?)?;
            "Complementary error function of each element, ``1 - erf(x)``."
            erfc erfc_ => Erfc,
                "ErfcBackward0" self => |g, x| g.mul(&x.mul(x)?.neg()?.exp()?.mul(&num(-TWO_OVER_SQRT_PI))?)?;
            "Reciprocal of each element, ``1 / x``."
            reciprocal reciprocal_ => Reciprocal,
                "ReciprocalBackward0" result, fused Reciprocal => |g, y| formulas::reciprocal(g, y)?;
            "Natural logarithm of the absolute value of the gamma function of each element."
            lgamma lgamma_ => Lgamma,
                "LgammaBackward0" self => |g, x| g.mul(&x.digamma()?)?;
            "Digamma function (the derivative of lgamma) of each element."
            digamma digamma_ => Digamma,
                "DigammaBackward0" self => |g, x| g.mul(&x.polygamma(1)?)?;
            "Inverse error function of each element."
            erfinv erfinv_ => Erfinv,
                "ErfinvBackward0" result => |g, y| g.mul(&y.mul(y)?.exp()?.mul(&num(SQRT_PI_OVER_2))?)?;
            "Modified Bessel function of the first kind of order 0 of each element."
            i0 i0_ => I0,
                "I0Backward0" self => |g, x| g.mul(&x.special_i1()?)?;
            "Normalized sinc function ``sin(pi x) / (pi x)`` of each element (1 at 0)."
            sinc sinc_ => Sinc,
                "SincBackward0" self => |g, x| g.mul(&sinc_grad(x)?)?;
        }
    };
}

float_unary_rows!(float_unary);

// The functions of `torch.special` that are not `Tensor` methods in torch
// (the Python binding reaches them as `Tensor._special_*`).
float_unary! {
    FORMULAS_SPECIAL("special functions: entr, ndtr, ndtri, log_ndtr, erfcx, scaled and order-1 Bessel I");
    "Entropy term ``-x log(x)`` of each element (0 at 0, ``-inf`` below 0)."
    special_entr special_entr_ => Entr,
        "SpecialEntrBackward0" self => |g, x| g.mul(&x.log()?.add(&num(1.0))?.neg()?)?;
    "Standard normal cumulative distribution function of each element."
    special_ndtr special_ndtr_ => Ndtr,
        "SpecialNdtrBackward0" self => |g, x| g.mul(&x.mul(x)?.mul(&num(-0.5))?.exp()?.mul(&num(1.0 / SQRT_2PI))?)?;
    "Inverse of the standard normal cumulative distribution function of each element."
    special_ndtri special_ndtri_ => Ndtri,
        "SpecialNdtriBackward0" result => |g, y| g.mul(&y.mul(y)?.mul(&num(0.5))?.exp()?.mul(&num(SQRT_2PI))?)?;
    "Logarithm of the standard normal cumulative distribution function of each element."
    special_log_ndtr special_log_ndtr_ => LogNdtr,
        "SpecialLogNdtrBackward0" self => |g, x| g.mul(&x.mul(x)?.mul(&num(-0.5))?
            .sub(&x.special_log_ndtr()?)?.exp()?.mul(&num(1.0 / SQRT_2PI))?)?;
    "Scaled complementary error function ``exp(x^2) erfc(x)`` of each element."
    special_erfcx special_erfcx_ => Erfcx,
        "SpecialErfcxBackward0" self => |g, x| g.mul(&x.mul(&x.special_erfcx()?)?.mul(&num(2.0))?
            .sub(&num(TWO_OVER_SQRT_PI))?)?;
    "Exponentially scaled modified Bessel function of the first kind of order 0, ``exp(-|x|) i0(x)``."
    special_i0e special_i0e_ => I0e,
        "SpecialI0EBackward0" self => |g, x| g.mul(&x.special_i1e()?.sub(&x.sign()?.mul(&x.special_i0e()?)?)?)?;
    "Modified Bessel function of the first kind of order 1 of each element."
    special_i1 special_i1_ => I1,
        "SpecialI1Backward0" self => |g, x| g.mul(&at_zero(x, 0.5, &x.i0()?.sub(&x.special_i1()?.div(x)?)?)?)?;
    "Exponentially scaled modified Bessel function of the first kind of order 1, ``exp(-|x|) i1(x)``."
    special_i1e special_i1e_ => I1e,
        "SpecialI1EBackward0" self => |g, x| g.mul(&at_zero(
            x,
            0.5,
            &x.special_i0e()?.sub(&x.special_i1e()?.mul(&x.sign()?.add(&x.reciprocal()?)?)?)?,
        )?)?;
}

/// `sqrt(pi) / 2`, the scale of erfinv's derivative.
const SQRT_PI_OVER_2: f64 = 0.886_226_925_452_758;
/// `sqrt(2 pi)`, the scale of ndtri's derivative.
const SQRT_2PI: f64 = 2.506_628_274_631_000_7;

/// `d` with `v` where `x` is 0 (the limit of a formula that divides by `x`).
fn at_zero(x: &Tensor, v: f64, d: &Tensor) -> Result<Tensor> {
    num(v).r#where(&x.eq(&num(0.0))?, d)
}

/// sinc's derivative `(cos(pi x) pi x - sin(pi x)) / (pi x^2)`, 0 at 0.
fn sinc_grad(x: &Tensor) -> Result<Tensor> {
    let px = x.mul(&num(std::f64::consts::PI))?;
    let d = px.cos()?.mul(&px)?.sub(&px.sin()?)?.div(&px.mul(x)?)?;
    at_zero(x, 0.0, &d)
}

/// Defines dtype-preserving unary ops over the numeric dtypes, one row each
/// of the table `FORMULAS_NUM`; `$bool` says what bool tensors do: `Some(f)`
/// applies `f`, `None` raises as torch. The backward reads the output
/// gradient `$g` and the saved `self` or `result` as `$v` (`none`: nothing
/// saved, `$v` is unused); `fused F` as in `float_unary!`.
macro_rules! num_unary {
    ($table:ident($family:literal);
     $($(#[binding($how:ident)])? $doc:literal $name:ident $name_:ident $(| $alias:ident $alias_:ident)*
       => $f:ident, bool: $bool:expr,
       $node:literal $saved:ident $(, fused $fz:ident)? => |$g:ident, $v:pat_param| $grad:expr;)*) => {
        crate::autograd::derivatives! {
            table $table($family) for Tensor;
            $(
                #[doc = $doc]
                pub fn $name(&self) -> Result<Tensor> {
                    record $node, [self];
                    compute => out = dispatch_numeric!(self.dtype(), T => map1::<T, T>(self, <T as Num>::$f),
                        else if self.dtype().is_complex() {
                            complex_num_unary(stringify!($name), self)?
                        } else {
                            match $bool {
                                Some(g) => map1::<bool, bool>(self, g),
                                None => return Err(bool_error(stringify!($name))),
                            }
                        });
                    save |s| { save_num_unary!(s, $saved, self, &out); }
                    backward |ctx, g| {
                        let $g = &g[0];
                        // `()` for ops that save nothing.
                        #[allow(clippy::let_unit_value)]
                        let saved = saved_num_unary!(ctx, $saved);
                        $(if fusable(&[$g, saved]) {
                            return Ok(vec![Some(grad2(Grad2::$fz, $g, saved)?)]);
                        })?
                        #[allow(clippy::let_unit_value)]
                        let $v = saved;
                        Ok(vec![Some($grad)])
                    };
                    forward formula(|t| t.map1(|$g| {
                        #[allow(clippy::let_unit_value)]
                        let $v = &jvp_value!($saved, self, &out);
                        Ok($grad)
                    }));
                    // Elementwise formulas broadcast over a batch dim.
                    batched broadcast;
                    inplace $name_(self) |s| s.$name();
                        => dispatch_numeric!(self.dtype(), T => apply1::<T>(self, <T as Num>::$f),
                            else if self.dtype().is_complex() {
                                complex_num_unary_(stringify!($name_), self)
                            } else {
                                match $bool {
                                    Some(g) => apply1::<bool>(self, g),
                                    None => Err(bool_error(stringify!($name_))),
                                }
                            });
                }
            )*
        }
    };
}

macro_rules! save_num_unary {
    ($s:ident, none, $x:expr, $out:expr) => {{
        let _ = &$s;
    }};
    ($s:ident, $saved:ident, $x:expr, $out:expr) => {
        save_unary!($s, $saved, $x, $out)
    };
}

macro_rules! saved_num_unary {
    ($ctx:ident, none) => {{
        let _ = &$ctx;
    }};
    ($ctx:ident, $saved:ident) => {
        &$ctx.saved(0)?
    };
}

const NO_BOOL: Option<fn(bool) -> bool> = None;

/// The numeric unary ops on a complex tensor: `neg` negates, `abs` gives
/// the magnitude in the real dtype, the others raise torch's errors.
fn complex_num_unary(op: &str, x: &Tensor) -> Result<Tensor> {
    match op {
        "neg" => crate::dispatch_complex!(x.dtype(), C => Ok(map1::<C, C>(x, |z| -z)),
            else Err(unsupported(op, x.dtype()))),
        "abs" => x.complex_magnitude(),
        _ => Err(complex_refusal(op, x.dtype())),
    }
}

/// [`complex_num_unary`] in place (`abs_` is refused: its result is real).
fn complex_num_unary_(op: &str, x: &Tensor) -> Result<()> {
    match op {
        "neg_" => crate::dispatch_complex!(x.dtype(), C => apply1::<C>(x, |z| -z),
            else Err(unsupported(op, x.dtype()))),
        "abs_" => Err(Error::runtime(
            "In-place abs is not supported for complex tensors.",
        )),
        _ => Err(complex_refusal(op.trim_end_matches('_'), x.dtype())),
    }
}

/// torch's error for a rounding, sign or clamping op on complex numbers.
fn complex_refusal(op: &str, dt: DType) -> Error {
    match op {
        "floor" | "ceil" | "trunc" => {
            Error::not_implemented_msg(format!("{op} is not supported for complex inputs"))
        }
        "round" => unsupported("round_vml_cpu", dt),
        "sign" => Error::not_implemented_msg(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.",
        ),
        "relu" => Error::not_implemented_msg("clamp is not supported for complex types"),
        _ => unsupported(op, dt),
    }
}

/// abs's derivative: `g * sgn(x)` backward (a real `g`), and
/// `Re(t * conj(sgn(x)))` for a complex tangent `t` forward.
fn abs_grad(g: &Tensor, x: &Tensor) -> Result<Tensor> {
    if g.dtype().is_complex() {
        g.mul(&x.sgn()?.conj()?)?.real()
    } else {
        formulas::abs(g, x)
    }
}

/// torch's error for a numeric unary op applied to a bool tensor.
fn bool_error(op: &str) -> Error {
    if op.starts_with("neg") {
        Error::runtime("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    } else {
        unsupported(op, DType::Bool)
    }
}

/// The rows of the table `FORMULAS_NUM`, handed to `$callback` as
/// `float_unary_rows!` hands its rows; `bool:` says what a bool input does.
#[doc(hidden)]
#[macro_export]
macro_rules! num_unary_rows {
    ($callback:ident) => {
        $callback! {
            FORMULAS_NUM("unary numeric: neg, abs, sign, rounding, relu");
            "Negation of each element, ``-x`` (not for bool: see ``logical_not``)."
            neg neg_ | negative negative_ => negate, bool: NO_BOOL,
                "NegBackward0" none => |g, _| g.neg()?;
            "Absolute value of each element (the modulus for complex tensors)."
            abs abs_ | absolute absolute_ => magnitude, bool: NO_BOOL,
                "AbsBackward0" self, fused Abs => |g, x| abs_grad(g, x)?;
            "Sign of each element: -1, 0 or 1 (0 for NaN; bool unchanged)."
            sign sign_ => sign, bool: Some(|x: bool| x),
                "SignBackward0" none => |g, _| g.zeros_like()?;
            "Each element rounded down to an integer value (integers unchanged)."
            floor floor_ => to_floor, bool: NO_BOOL,
                "FloorBackward0" none => |g, _| g.zeros_like()?;
            "Each element rounded up to an integer value (integers unchanged)."
            ceil ceil_ => to_ceil, bool: NO_BOOL,
                "CeilBackward0" none => |g, _| g.zeros_like()?;
            "Each element rounded toward zero to an integer value (integers unchanged)."
            trunc trunc_ | fix fix_ => to_trunc, bool: NO_BOOL,
                "TruncBackward0" none => |g, _| g.zeros_like()?;
            #[binding(by_hand)]
            "Each element rounded to the nearest integer, ties to even (integers unchanged)."
            round round_ => to_round, bool: NO_BOOL,
                "RoundBackward0" none => |g, _| g.zeros_like()?;
            // relu'(0) = 0: the gradient passes only where the result is positive
            // (or NaN), as torch's threshold_backward.
            "Rectified linear unit of each element, ``max(x, 0)`` (NaN stays NaN)."
            relu relu_ => relu, bool: NO_BOOL,
                "ReluBackward0" result, fused Relu => |g, y| formulas::relu(g, y)?;
        }
    };
}

num_unary_rows!(num_unary);

derivatives! {
    table FORMULAS_ROUND("unary float rounding: round(decimals), frac") for Tensor;

    /// `round(decimals=d)`: rounds to `d` decimal places (ties to even);
    /// negative `d` rounds to tens, hundreds... Floats only unless `d == 0`.
    pub fn round_decimals(&self, decimals: i64) -> Result<Tensor> {
        before {
            if decimals == 0 {
                return self.round();
            };
        }
        record "RoundBackward1", [self];
        compute => out = dispatch_float!(self.dtype(), T => {
            let (scale, up) = decimal_scale::<T>(decimals);
            map1::<T, T>(self, move |x| round_scaled(x, scale, up))
        }, else return Err(unsupported("round_decimals", self.dtype())));
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].zeros_like()?)]);
        forward formula(|_| Ok(vec![None]));
        batched broadcast;
    }

    /// `frac()`: `x - trunc(x)` (floats only, as torch).
    pub fn frac(&self) -> Result<Tensor> {
        record "FracBackward0", [self];
        compute => out = dispatch_float!(self.dtype(), T => map1::<T, T>(self, |x| x - x.trunc()),
            else return Err(unsupported("frac", self.dtype())));
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].clone())]);
        forward formula(|t| t.map1(|t| Ok(t.copy())));
        batched broadcast;
        inplace frac_(self) |s| s.frac();
            => dispatch_float!(self.dtype(), T => apply1::<T>(self, |x| x - x.trunc()),
                else Err(unsupported("frac_", self.dtype())));
    }
}

impl Tensor {
    // Not the row's generated in-place form: `decimals == 0` hands off to
    // `round_` (which also takes integers) before any autograd check, and
    // autograd errors name the op `round_`.
    /// In-place form of [`Tensor::round_decimals`].
    pub fn round_decimals_(&self, decimals: i64) -> Result<()> {
        crate::autograd::captured!(round_decimals_ (&self, decimals: i64) -> () {
            if decimals == 0 {
                return self.round_();
            }
            let _span = crate::trace::inplace_op("aten::round_", self, &[]);
            if inplace("round_", self, &[], |s| s.round_decimals(decimals))? {
                return Ok(());
            }
            dispatch_float!(self.dtype(), T => {
                let (scale, up) = decimal_scale::<T>(decimals);
                apply1::<T>(self, move |x| round_scaled(x, scale, up))
            }, else Err(unsupported("round_decimals_", self.dtype())))
        })
    }

    /// `square()`: `x * x` (bool squares to int64, as torch's `pow(x, 2)`).
    pub fn square(&self) -> Result<Tensor> {
        self.pow(&Tensor::scalar(2i64))
    }

    /// In-place form of [`Tensor::square`].
    pub fn square_(&self) -> Result<()> {
        crate::autograd::captured!(square_ (&self) -> () {
            self.pow_(&Tensor::scalar(2i64))
        })
    }

    /// `positive()`: the tensor itself (refused for bool, as torch).
    pub fn positive(&self) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::runtime(
                "The `+` operator, on a bool tensor is not supported.",
            ));
        }
        Ok(self.clone())
    }

    /// `isnan()`: true where the element is NaN.
    pub fn isnan(&self) -> Tensor {
        self.float_predicate(|x| x.is_nan(), false)
    }
    /// `isinf()`: true where the element is +inf or -inf.
    pub fn isinf(&self) -> Tensor {
        self.float_predicate(|x| x.is_infinite(), false)
    }
    /// `isposinf()`: true where the element is +inf (not for complex).
    pub fn isposinf(&self) -> Result<Tensor> {
        self.real_only("isposinf does not support complex inputs.")?;
        Ok(self.float_predicate(|x| x == f64::INFINITY, false))
    }
    /// `isneginf()`: true where the element is -inf (not for complex).
    pub fn isneginf(&self) -> Result<Tensor> {
        self.real_only("isneginf does not support complex inputs.")?;
        Ok(self.float_predicate(|x| x == f64::NEG_INFINITY, false))
    }
    /// `isfinite()`: true where the element is neither infinite nor NaN.
    pub fn isfinite(&self) -> Tensor {
        self.float_predicate(|x| x.is_finite(), true)
    }
    /// `signbit()`: true where the sign bit is set (includes -0.0; not for
    /// complex).
    pub fn signbit(&self) -> Result<Tensor> {
        self.real_only("signbit is not implemented for complex tensors.")?;
        Ok(dispatch!(self.dtype(), T => map1::<T, bool>(self, |x| {
            if T::DTYPE.is_floating_point() {
                x.to_f64().is_sign_negative()
            } else {
                x.to_i64() < 0
            }
        })))
    }

    /// torch's `NotImplementedError` `msg` for a complex tensor.
    pub(crate) fn real_only(&self, msg: &str) -> Result<()> {
        if self.dtype().is_complex() {
            return Err(Error::not_implemented_msg(msg));
        }
        Ok(())
    }

    /// A bool tensor of `pred` on float elements; `int_value` for the
    /// elements of integer and bool tensors (which are always finite). A
    /// complex element tests both parts: any of them when `int_value` is
    /// false (isnan, isinf), both when true (isfinite).
    fn float_predicate(&self, pred: fn(f64) -> bool, int_value: bool) -> Tensor {
        dispatch_float!(self.dtype(), T => map1::<T, bool>(self, move |x| pred(x.to_f64())),
            else crate::dispatch_complex!(self.dtype(), T => map1::<T, bool>(self, move |x| {
                let z = x.to_complex();
                if int_value {
                    pred(z.re) && pred(z.im)
                } else {
                    pred(z.re) || pred(z.im)
                }
            }), else Tensor::full(self.shape(), int_value, DType::Bool)))
    }

    /// `logical_not()`: true where the element is zero (any dtype).
    pub fn logical_not(&self) -> Tensor {
        dispatch!(self.dtype(), T => map1::<T, bool>(self, |x| !x.to_bool()))
    }

    /// In-place form of [`Tensor::logical_not`] (stores 0/1 in this dtype).
    pub fn logical_not_(&self) -> Result<()> {
        crate::autograd::captured!(logical_not_ (&self) -> () {
            assign("logical_not_", self, &self.logical_not())
        })
    }

    /// `bitwise_not()` (`~x`): bit complement of integers, negation of bools.
    pub fn bitwise_not(&self) -> Result<Tensor> {
        match self.dtype() {
            DType::Bool => Ok(map1::<bool, bool>(self, |x| !x)),
            DType::Int32 => Ok(map1::<i32, i32>(self, |x| !x)),
            DType::Int64 => Ok(map1::<i64, i64>(self, |x| !x)),
            dt => Err(unsupported("bitwise_not", dt)),
        }
    }

    /// In-place form of [`Tensor::bitwise_not`].
    pub fn bitwise_not_(&self) -> Result<()> {
        crate::autograd::captured!(bitwise_not_ (&self) -> () {
            check_write(self)?;
            match self.dtype() {
                DType::Bool => apply1::<bool>(self, |x| !x),
                DType::Int32 => apply1::<i32>(self, |x| !x),
                DType::Int64 => apply1::<i64>(self, |x| !x),
                dt => Err(unsupported("bitwise_not_", dt)),
            }
        })
    }
}

/// The power of ten for rounding to `decimals` places, and whether to
/// multiply (positive `decimals`) or divide (negative) by it first.
fn decimal_scale<T: Element>(decimals: i64) -> (T, bool) {
    let exp = decimals.unsigned_abs().min(400) as i32;
    (T::from_f64(10f64.powi(exp)), decimals > 0)
}

#[inline(always)]
fn round_scaled<T: Num + std::ops::Mul<Output = T> + std::ops::Div<Output = T>>(
    x: T,
    scale: T,
    up: bool,
) -> T {
    if up {
        T::to_round(x * scale) / scale
    } else {
        T::to_round(x / scale) * scale
    }
}
