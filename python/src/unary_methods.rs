//! The pointwise unary methods of `Tensor` (`sqrt`, `exp`, `sin`, ...)
//! and their in-place `_` forms, each calling the core op of its name.

use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor, TensorOut};
use pyo3::prelude::*;

/// Unary methods `$name()` and `$name_()` calling core ops `$f`/`$f_`.
/// An entry's doc comments become `$name`'s docstring, and `$name_` gets a
/// one-line docstring naming `$name` (as in the other method macros here).
macro_rules! unary_methods {
    ($($(#[doc = $doc:literal])* $name:ident $name_:ident => $f:ident $f_:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                fn $name(&self, py: Python<'_>) -> PyResult<TensorOut> {
                    let t = &self.t;
                    Ok(nogil(py, t.numel(), || t.$f()).py()?.into())
                }

                #[doc = concat!("In-place version of :meth:`Tensor.", stringify!($name), "`.")]
                fn $name_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
                    let t = &slf.get().t;
                    nogil(slf.py(), t.numel(), || t.$f_()).py()?;
                    Ok(slf.clone())
                }
            )*
        }
    };
}

unary_methods! {
    /// Square root of each element.
    ///
    /// See :func:`ferrograd.sqrt`.
    sqrt sqrt_ => sqrt sqrt_;
    /// Reciprocal square root of each element, ``1 / sqrt(x)``.
    ///
    /// See :func:`ferrograd.rsqrt`.
    rsqrt rsqrt_ => rsqrt rsqrt_;
    /// Exponential of each element, ``e ** x``.
    ///
    /// See :func:`ferrograd.exp`.
    exp exp_ => exp exp_;
    /// Base-2 exponential of each element, ``2 ** x``.
    ///
    /// See :func:`ferrograd.exp2`.
    exp2 exp2_ => exp2 exp2_;
    /// ``exp(x) - 1`` for each element, accurate for small ``x``.
    ///
    /// See :func:`ferrograd.expm1`.
    expm1 expm1_ => expm1 expm1_;
    /// Natural logarithm of each element.
    ///
    /// See :func:`ferrograd.log`.
    log log_ => log log_;
    /// ``log(1 + x)`` for each element, accurate for small ``x``.
    ///
    /// See :func:`ferrograd.log1p`.
    log1p log1p_ => log1p log1p_;
    /// Base-2 logarithm of each element.
    ///
    /// See :func:`ferrograd.log2`.
    log2 log2_ => log2 log2_;
    /// Base-10 logarithm of each element.
    ///
    /// See :func:`ferrograd.log10`.
    log10 log10_ => log10 log10_;
    /// Sine of each element (in radians).
    ///
    /// See :func:`ferrograd.sin`.
    sin sin_ => sin sin_;
    /// Cosine of each element (in radians).
    ///
    /// See :func:`ferrograd.cos`.
    cos cos_ => cos cos_;
    /// Tangent of each element (in radians).
    ///
    /// See :func:`ferrograd.tan`.
    tan tan_ => tan tan_;
    /// Inverse sine of each element.
    ///
    /// See :func:`ferrograd.asin`.
    asin asin_ => asin asin_;
    /// Alias for :meth:`Tensor.asin`.
    arcsin arcsin_ => asin asin_;
    /// Inverse cosine of each element.
    ///
    /// See :func:`ferrograd.acos`.
    acos acos_ => acos acos_;
    /// Alias for :meth:`Tensor.acos`.
    arccos arccos_ => acos acos_;
    /// Inverse tangent of each element.
    ///
    /// See :func:`ferrograd.atan`.
    atan atan_ => atan atan_;
    /// Alias for :meth:`Tensor.atan`.
    arctan arctan_ => atan atan_;
    /// Hyperbolic sine of each element.
    ///
    /// See :func:`ferrograd.sinh`.
    sinh sinh_ => sinh sinh_;
    /// Hyperbolic cosine of each element.
    ///
    /// See :func:`ferrograd.cosh`.
    cosh cosh_ => cosh cosh_;
    /// Hyperbolic tangent of each element.
    ///
    /// See :func:`ferrograd.tanh`.
    tanh tanh_ => tanh tanh_;
    /// Inverse hyperbolic sine of each element.
    ///
    /// See :func:`ferrograd.asinh`.
    asinh asinh_ => asinh asinh_;
    /// Alias for :meth:`Tensor.asinh`.
    arcsinh arcsinh_ => asinh asinh_;
    /// Inverse hyperbolic cosine of each element.
    ///
    /// See :func:`ferrograd.acosh`.
    acosh acosh_ => acosh acosh_;
    /// Alias for :meth:`Tensor.acosh`.
    arccosh arccosh_ => acosh acosh_;
    /// Inverse hyperbolic tangent of each element.
    ///
    /// See :func:`ferrograd.atanh`.
    atanh atanh_ => atanh atanh_;
    /// Alias for :meth:`Tensor.atanh`.
    arctanh arctanh_ => atanh atanh_;
    /// Logistic sigmoid of each element, ``1 / (1 + exp(-x))``.
    ///
    /// See :func:`ferrograd.sigmoid`.
    sigmoid sigmoid_ => sigmoid sigmoid_;
    /// Gauss error function of each element.
    ///
    /// See :func:`ferrograd.erf`.
    erf erf_ => erf erf_;
    /// Complementary error function of each element, ``1 - erf(x)``.
    ///
    /// See :func:`ferrograd.erfc`.
    erfc erfc_ => erfc erfc_;
    /// Reciprocal of each element, ``1 / x``.
    ///
    /// See :func:`ferrograd.reciprocal`.
    reciprocal reciprocal_ => reciprocal reciprocal_;
    /// Negation of each element, ``-x``.
    ///
    /// See :func:`ferrograd.neg`.
    neg neg_ => neg neg_;
    /// Alias for :meth:`Tensor.neg`.
    negative negative_ => neg neg_;
    /// Absolute value of each element (the modulus for complex tensors).
    ///
    /// See :func:`ferrograd.abs`.
    abs abs_ => abs abs_;
    /// Alias for :meth:`Tensor.abs`.
    absolute absolute_ => abs abs_;
    /// Sign of each element: -1, 0 or 1.
    ///
    /// See :func:`ferrograd.sign`.
    sign sign_ => sign sign_;
    /// Each element rounded down to an integer value.
    ///
    /// See :func:`ferrograd.floor`.
    floor floor_ => floor floor_;
    /// Each element rounded up to an integer value.
    ///
    /// See :func:`ferrograd.ceil`.
    ceil ceil_ => ceil ceil_;
    /// Each element rounded toward zero to an integer value.
    ///
    /// See :func:`ferrograd.trunc`.
    trunc trunc_ => trunc trunc_;
    /// Alias for :meth:`Tensor.trunc`.
    fix fix_ => trunc trunc_;
    /// Fractional part of each element, ``x - trunc(x)``.
    ///
    /// See :func:`ferrograd.frac`.
    frac frac_ => frac frac_;
    /// Rectified linear unit of each element, ``max(x, 0)``.
    ///
    /// See :func:`ferrograd.relu`.
    relu relu_ => relu relu_;
    /// Square of each element, ``x * x``.
    ///
    /// See :func:`ferrograd.square`.
    square square_ => square square_;
    /// Bitwise NOT of each element (logical NOT for bool tensors).
    ///
    /// See :func:`ferrograd.bitwise_not`.
    bitwise_not bitwise_not_ => bitwise_not bitwise_not_;
    /// Complex conjugate of each element, written to new memory (a real tensor is returned unchanged).
    ///
    /// See :func:`ferrograd.conj_physical`.
    conj_physical conj_physical_ => conj_physical conj_physical_;
}
