//! Elementwise operations on `Tensor`: Python operators (with reflected and
//! in-place forms), pointwise methods and their `_` in-place forms.
//!
//! Everything here converts arguments and releases the GIL for big work;
//! the ops themselves live in the core crate (`ops/pointwise`).

use crate::convert::{number_arg as number, operand};
use crate::errors::IntoPyResult;
use crate::routed::batched_method;
use crate::tensor::{arg, nogil, wrap_any, PyTensor, TensorOut};
use ferrograd::ops::RoundingMode;
use ferrograd::{Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyString;

fn new_obj(py: Python<'_>, t: Tensor) -> PyResult<Py<PyAny>> {
    wrap_any(py, t)
}

/// An optional tensor-or-number argument (`None` stays `None`).
fn opt_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Tensor>> {
    match obj {
        Some(o) if !o.is_none() => Ok(Some(arg(o, what)?)),
        _ => Ok(None),
    }
}

fn rounding_mode(mode: Option<&Bound<'_, PyAny>>) -> PyResult<Option<RoundingMode>> {
    match mode {
        None => Ok(None),
        Some(m) if m.is_none() => Ok(None),
        Some(m) => {
            let s = m.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err("div(): argument 'rounding_mode' must be str or None")
            })?;
            RoundingMode::parse(s.to_str()?).py().map(Some)
        }
    }
}

/// An `alpha=` form (`add`, `sub`, `rsub`): `f(self, other, alpha)`.
fn alpha_op(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    alpha: Option<&Bound<'_, PyAny>>,
    f: fn(&Tensor, &Tensor, Scalar) -> ferrograd::Result<Tensor>,
) -> PyResult<TensorOut> {
    let b = arg(other, "other")?;
    let k = number(alpha, "alpha", Scalar::Int(1))?;
    Ok(nogil(py, a.numel().max(b.numel()), || f(a, &b, k))
        .py()?
        .into())
}

/// The in-place `alpha=` forms (`add_`, `sub_`): `f(self, other, alpha)`,
/// returning `self`.
fn alpha_op_<'py>(
    slf: &Bound<'py, PyTensor>,
    other: &Bound<'_, PyAny>,
    alpha: Option<&Bound<'_, PyAny>>,
    f: fn(&Tensor, &Tensor, Scalar) -> ferrograd::Result<()>,
) -> PyResult<Bound<'py, PyTensor>> {
    let b = arg(other, "other")?;
    let k = number(alpha, "alpha", Scalar::Int(1))?;
    let a = &slf.get().t;
    nogil(slf.py(), a.numel(), || f(a, &b, k)).py()?;
    Ok(slf.clone())
}

/// Binary operators: `$op` and its reflection `$rop` return NotImplemented
/// for operands that are not tensors or numbers; `$iop` writes in place.
/// `$rop` computes `$reflected(self, other)` for `other op self`, recording
/// the graph torch records for it (e.g. `2 * t` is `t.mul(2)`, so the
/// tensor is the node's first input).
macro_rules! operators {
    ($($op:ident $rop:ident $iop:ident => $f:ident $f_:ident, $reflected:expr;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $op(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let Some(b) = operand(other)? else {
                        return Ok(py.NotImplemented());
                    };
                    let a = &self.t;
                    let out = nogil(py, a.numel().max(b.numel()), || a.$f(&b)).py()?;
                    new_obj(py, out)
                }

                fn $rop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let Some(b) = operand(other)? else {
                        return Ok(py.NotImplemented());
                    };
                    let a = &self.t;
                    let reflected: fn(&Tensor, &Tensor) -> ferrograd::Result<Tensor> = $reflected;
                    let out = nogil(py, a.numel().max(b.numel()), || reflected(a, &b)).py()?;
                    new_obj(py, out)
                }

                fn $iop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
                    let b = arg(other, "other")?;
                    let a = &self.t;
                    nogil(py, a.numel(), || a.$f_(&b)).py()
                }
            )*
        }
    };
}

operators! {
    __add__ __radd__ __iadd__ => add add_, |a, b| a.add(b);
    __sub__ __rsub__ __isub__ => sub sub_, |a, b| a.rsub_scaled(b, Scalar::Int(1));
    __mul__ __rmul__ __imul__ => mul mul_, |a, b| a.mul(b);
    __truediv__ __rtruediv__ __itruediv__ => div div_, |a, b| a.reciprocal()?.mul(b);
    __floordiv__ __rfloordiv__ __ifloordiv__ => floor_divide floor_divide_, |a, b| b.floor_divide(a);
    __mod__ __rmod__ __imod__ => remainder remainder_, |a, b| b.remainder(a);
    __and__ __rand__ __iand__ => bitwise_and bitwise_and_, |a, b| a.bitwise_and(b);
    __or__ __ror__ __ior__ => bitwise_or bitwise_or_, |a, b| a.bitwise_or(b);
    __xor__ __rxor__ __ixor__ => bitwise_xor bitwise_xor_, |a, b| a.bitwise_xor(b);
}

/// Comparison operators: bool tensors, NotImplemented for other operands
/// (so `t == "a"` is False, as in torch).
macro_rules! comparison_operators {
    ($($op:ident => $f:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $op(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let Some(b) = operand(other)? else {
                        return Ok(py.NotImplemented());
                    };
                    let a = &self.t;
                    let out = nogil(py, a.numel().max(b.numel()), || a.$f(&b)).py()?;
                    new_obj(py, out)
                }
            )*
        }
    };
}

comparison_operators! {
    __eq__ => eq;
    __ne__ => ne;
    __lt__ => lt;
    __le__ => le;
    __gt__ => gt;
    __ge__ => ge;
}

/// Unary methods `$name()` and `$name_()` calling core ops `$f`/`$f_`.
macro_rules! unary_methods {
    ($($name:ident $name_:ident => $f:ident $f_:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $name(&self, py: Python<'_>) -> PyResult<TensorOut> {
                    let t = &self.t;
                    Ok(nogil(py, t.numel(), || t.$f()).py()?.into())
                }

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
    sqrt sqrt_ => sqrt sqrt_;
    rsqrt rsqrt_ => rsqrt rsqrt_;
    exp exp_ => exp exp_;
    exp2 exp2_ => exp2 exp2_;
    expm1 expm1_ => expm1 expm1_;
    log log_ => log log_;
    log1p log1p_ => log1p log1p_;
    log2 log2_ => log2 log2_;
    log10 log10_ => log10 log10_;
    sin sin_ => sin sin_;
    cos cos_ => cos cos_;
    tan tan_ => tan tan_;
    asin asin_ => asin asin_;
    arcsin arcsin_ => asin asin_;
    acos acos_ => acos acos_;
    arccos arccos_ => acos acos_;
    atan atan_ => atan atan_;
    arctan arctan_ => atan atan_;
    sinh sinh_ => sinh sinh_;
    cosh cosh_ => cosh cosh_;
    tanh tanh_ => tanh tanh_;
    asinh asinh_ => asinh asinh_;
    arcsinh arcsinh_ => asinh asinh_;
    acosh acosh_ => acosh acosh_;
    arccosh arccosh_ => acosh acosh_;
    atanh atanh_ => atanh atanh_;
    arctanh arctanh_ => atanh atanh_;
    sigmoid sigmoid_ => sigmoid sigmoid_;
    erf erf_ => erf erf_;
    erfc erfc_ => erfc erfc_;
    reciprocal reciprocal_ => reciprocal reciprocal_;
    neg neg_ => neg neg_;
    negative negative_ => neg neg_;
    abs abs_ => abs abs_;
    absolute absolute_ => abs abs_;
    sign sign_ => sign sign_;
    floor floor_ => floor floor_;
    ceil ceil_ => ceil ceil_;
    trunc trunc_ => trunc trunc_;
    fix fix_ => trunc trunc_;
    frac frac_ => frac frac_;
    relu relu_ => relu relu_;
    square square_ => square square_;
    bitwise_not bitwise_not_ => bitwise_not bitwise_not_;
    conj_physical conj_physical_ => conj_physical conj_physical_;
}

/// The complex-number methods that have no in-place form.
#[pymethods]
impl PyTensor {
    fn conj(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.t;
        Ok(nogil(py, t.numel(), || t.conj()).py()?.into())
    }
    fn sgn(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.t;
        Ok(nogil(py, t.numel(), || t.sgn()).py()?.into())
    }
    fn angle(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.t;
        Ok(nogil(py, t.numel(), || t.angle()).py()?.into())
    }
    fn resolve_conj(&self) -> TensorOut {
        self.t.resolve_conj().into()
    }
    fn resolve_neg(&self) -> TensorOut {
        self.t.clone().into()
    }
    fn is_conj(&self) -> bool {
        self.t.is_conj()
    }
    fn is_neg(&self) -> bool {
        false
    }
    #[getter]
    fn get_real(&self) -> PyResult<TensorOut> {
        Ok(self.t.real().py()?.into())
    }
    #[setter]
    fn set_real(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = arg(value, "real")?;
        self.t.real().py()?.copy_(&v).py()
    }
    #[getter]
    fn get_imag(&self) -> PyResult<TensorOut> {
        Ok(self.t.imag().py()?.into())
    }
    #[setter]
    fn set_imag(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = arg(value, "imag")?;
        self.t.imag().py()?.copy_(&v).py()
    }
}

/// `view_as_real(input)`: a real view with a trailing dim of 2.
#[pyfunction]
pub fn view_as_real(input: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
    Ok(input.t.view_as_real().py()?.into())
}

/// `view_as_complex(input)`: a complex view of a trailing dim of 2.
#[pyfunction]
pub fn view_as_complex(input: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
    Ok(input.t.view_as_complex().py()?.into())
}

/// `complex(real, imag, *, out=None)`: a complex tensor from two real ones.
#[pyfunction]
pub fn complex(
    py: Python<'_>,
    real: &Bound<'_, PyAny>,
    imag: &Bound<'_, PyAny>,
) -> PyResult<TensorOut> {
    let (a, b) = (tensor_only(real, "real", 1)?, tensor_only(imag, "imag", 2)?);
    Ok(
        nogil(py, a.numel().max(b.numel()), || Tensor::complex(&a, &b))
            .py()?
            .into(),
    )
}

/// `polar(abs, angle, *, out=None)`: `abs * e^(i angle)`.
#[pyfunction]
pub fn polar(
    py: Python<'_>,
    abs: &Bound<'_, PyAny>,
    angle: &Bound<'_, PyAny>,
) -> PyResult<TensorOut> {
    let (a, b) = (tensor_only(abs, "abs", 1)?, tensor_only(angle, "angle", 2)?);
    Ok(
        nogil(py, a.numel().max(b.numel()), || Tensor::polar(&a, &b))
            .py()?
            .into(),
    )
}

/// A tensor argument that must be a tensor (not a number), with torch's
/// TypeError otherwise.
fn tensor_only(obj: &Bound<'_, PyAny>, what: &str, position: usize) -> PyResult<Tensor> {
    match obj.cast::<PyTensor>() {
        Ok(t) => Ok(t.get().t.clone()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "complex(): argument '{what}' (position {position}) must be Tensor, not {}",
            crate::convert::type_name(obj)
        ))),
    }
}

/// Bool-valued predicates (never fail).
macro_rules! predicates {
    ($($name:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $name(&self, py: Python<'_>) -> TensorOut {
                    let t = &self.t;
                    nogil(py, t.numel(), || t.$name()).into()
                }
            )*
        }
    };
}

predicates! {
    isnan;
    isinf;
    isfinite;
    logical_not;
}

/// Bool-valued predicates that refuse some dtypes (complex ones).
macro_rules! fallible_predicates {
    ($($name:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $name(&self, py: Python<'_>) -> PyResult<TensorOut> {
                    let t = &self.t;
                    Ok(nogil(py, t.numel(), || t.$name()).py()?.into())
                }
            )*
        }
    };
}

fallible_predicates! {
    isposinf;
    isneginf;
    signbit;
}

/// Binary methods `$name(other)` and `$name_(other)`.
macro_rules! binary_methods {
    ($($name:ident $name_:ident => $f:ident $f_:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $name(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let py = slf.py();
                    let b = match arg(other, "other") {
                        Ok(b) => b,
                        Err(e) => return batched_method(py, stringify!($name), (slf, other), e),
                    };
                    let a = &slf.get().t;
                    new_obj(py, nogil(py, a.numel().max(b.numel()), || a.$f(&b)).py()?)
                }

                fn $name_(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let py = slf.py();
                    let b = match arg(other, "other") {
                        Ok(b) => b,
                        Err(e) => return batched_method(py, stringify!($name_), (slf, other), e),
                    };
                    let a = &slf.get().t;
                    nogil(py, a.numel(), || a.$f_(&b)).py()?;
                    Ok(slf.clone().into_any().unbind())
                }
            )*
        }
    };
}

binary_methods! {
    mul mul_ => mul mul_;
    multiply multiply_ => mul mul_;
    true_divide true_divide_ => div div_;
    floor_divide floor_divide_ => floor_divide floor_divide_;
    remainder remainder_ => remainder remainder_;
    fmod fmod_ => fmod fmod_;
    atan2 atan2_ => atan2 atan2_;
    arctan2 arctan2_ => atan2 atan2_;
    eq eq_ => eq eq_;
    ne ne_ => ne ne_;
    not_equal not_equal_ => ne ne_;
    lt lt_ => lt lt_;
    less less_ => lt lt_;
    le le_ => le le_;
    less_equal less_equal_ => le le_;
    gt gt_ => gt gt_;
    greater greater_ => gt gt_;
    ge ge_ => ge ge_;
    greater_equal greater_equal_ => ge ge_;
    logical_and logical_and_ => logical_and logical_and_;
    logical_or logical_or_ => logical_or logical_or_;
    logical_xor logical_xor_ => logical_xor logical_xor_;
    bitwise_and bitwise_and_ => bitwise_and bitwise_and_;
    bitwise_or bitwise_or_ => bitwise_or bitwise_or_;
    bitwise_xor bitwise_xor_ => bitwise_xor bitwise_xor_;
}

/// Methods `name(other, *, alpha=1)` and their in-place forms `name_`,
/// calling the core's `alpha=` ops `$f`/`$f_`.
macro_rules! alpha_methods {
    ($($name:ident $name_:ident => $f:path, $f_:path;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                #[pyo3(signature = (other, *, alpha = None))]
                fn $name(
                    &self,
                    py: Python<'_>,
                    other: &Bound<'_, PyAny>,
                    alpha: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<TensorOut> {
                    alpha_op(py, &self.t, other, alpha, $f)
                }

                #[pyo3(signature = (other, *, alpha = None))]
                fn $name_<'py>(
                    slf: &Bound<'py, Self>,
                    other: &Bound<'_, PyAny>,
                    alpha: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<Bound<'py, Self>> {
                    alpha_op_(slf, other, alpha, $f_)
                }
            )*
        }
    };
}

alpha_methods! {
    add add_ => Tensor::add_scaled, Tensor::add_scaled_;
    sub sub_ => Tensor::sub_scaled, Tensor::sub_scaled_;
    subtract subtract_ => Tensor::sub_scaled, Tensor::sub_scaled_;
}

/// Out-of-place/in-place method pairs: `$name(...)` returns a new tensor
/// from core `$f`, `$name_(...)` writes into self with `$f_` and returns
/// self. Both take the Python arguments `$arg` (signature `$sig`), bind
/// the core arguments with the `parse` statements and pass `$a`. The GIL
/// is released by the size of self (or of `work` when given, for an
/// out-of-place result that may broadcast larger).
macro_rules! method_pairs {
    ($($name:ident $name_:ident => $f:ident $f_:ident $sig:tt
        ($($arg:ident: $ty:ty),*) { $($parse:stmt;)* } ($($a:expr),*) $(work $w:expr)?;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                #[pyo3(signature = $sig)]
                fn $name(&self, py: Python<'_>, $($arg: $ty),*) -> PyResult<TensorOut> {
                    $($parse;)*
                    let x = &self.t;
                    let work = x.numel()$(.max($w))?;
                    Ok(nogil(py, work, || x.$f($($a),*)).py()?.into())
                }

                #[pyo3(signature = $sig)]
                fn $name_<'py>(slf: &Bound<'py, Self>, $($arg: $ty),*) -> PyResult<Bound<'py, Self>> {
                    $($parse;)*
                    let x = &slf.get().t;
                    nogil(slf.py(), x.numel(), || x.$f_($($a),*)).py()?;
                    Ok(slf.clone())
                }
            )*
        }
    };
}

method_pairs! {
    pow pow_ => pow pow_ (exponent) (exponent: &Bound<'_, PyAny>) {
        let b = arg(exponent, "exponent")?;
    } (&b) work b.numel();
    round round_ => round_decimals round_decimals_ (decimals = 0) (decimals: i64) {} (decimals);
    clamp clamp_ => clamp clamp_ (min = None, max = None)
        (min: Option<&Bound<'_, PyAny>>, max: Option<&Bound<'_, PyAny>>) {
        let lo = opt_arg(min, "min")?;
        let hi = opt_arg(max, "max")?;
    } (lo.as_ref(), hi.as_ref());
    clamp_min clamp_min_ => clamp_min clamp_min_ (min) (min: &Bound<'_, PyAny>) {
        let lo = arg(min, "min")?;
    } (&lo);
    clamp_max clamp_max_ => clamp_max clamp_max_ (max) (max: &Bound<'_, PyAny>) {
        let hi = arg(max, "max")?;
    } (&hi);
    lerp lerp_ => lerp lerp_ (end, weight) (end: PyRef<'_, PyTensor>, weight: &Bound<'_, PyAny>) {
        let w = arg(weight, "weight")?;
        let e = &end.t;
    } (e, &w) work e.numel();
    addcmul addcmul_ => addcmul addcmul_ (tensor1, tensor2, *, value = None)
        (tensor1: &Bound<'_, PyAny>, tensor2: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>) {
        let a = arg(tensor1, "tensor1")?;
        let b = arg(tensor2, "tensor2")?;
        let v = number(value, "value", Scalar::Int(1))?;
    } (&a, &b, v);
    addcdiv addcdiv_ => addcdiv addcdiv_ (tensor1, tensor2, *, value = None)
        (tensor1: &Bound<'_, PyAny>, tensor2: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>) {
        let a = arg(tensor1, "tensor1")?;
        let b = arg(tensor2, "tensor2")?;
        let v = number(value, "value", Scalar::Int(1))?;
    } (&a, &b, v);
}

#[pymethods]
impl PyTensor {
    fn __pow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let Some(b) = operand(other)? else {
            return Ok(py.NotImplemented());
        };
        if !modulo.is_none() {
            return Ok(py.NotImplemented());
        }
        let a = &self.t;
        new_obj(py, nogil(py, a.numel().max(b.numel()), || a.pow(&b)).py()?)
    }

    fn __rpow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let Some(b) = operand(other)? else {
            return Ok(py.NotImplemented());
        };
        if !modulo.is_none() {
            return Ok(py.NotImplemented());
        }
        let a = &self.t;
        new_obj(py, nogil(py, a.numel().max(b.numel()), || b.pow(a)).py()?)
    }

    fn __ipow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let _ = modulo;
        let b = arg(other, "exponent")?;
        let a = &self.t;
        nogil(py, a.numel(), || a.pow_(&b)).py()
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.t;
        Ok(nogil(py, t.numel(), || t.neg()).py()?.into())
    }

    fn __pos__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        slf.get().t.positive().py()?;
        Ok(slf.clone().into_any().unbind())
    }

    fn positive(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Self::__pos__(slf)
    }

    fn __abs__(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.t;
        Ok(nogil(py, t.numel(), || t.abs()).py()?.into())
    }

    fn __invert__(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.t;
        Ok(nogil(py, t.numel(), || t.bitwise_not()).py()?.into())
    }

    fn logical_not_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().t;
        nogil(slf.py(), t.numel(), || t.logical_not_()).py()?;
        Ok(slf.clone())
    }

    /// `other - alpha * self` (`torch.rsub(self, other, alpha=alpha)`).
    #[pyo3(signature = (other, *, alpha = None))]
    fn _rsub(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        alpha_op(py, &self.t, other, alpha, Tensor::rsub_scaled)
    }

    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn div(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let b = arg(other, "other")?;
        let mode = self::rounding_mode(rounding_mode)?;
        let a = &self.t;
        Ok(nogil(py, a.numel().max(b.numel()), || a.div_mode(&b, mode))
            .py()?
            .into())
    }

    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn div_<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let b = arg(other, "other")?;
        let mode = self::rounding_mode(rounding_mode)?;
        let a = &slf.get().t;
        nogil(slf.py(), a.numel(), || a.div_mode_(&b, mode)).py()?;
        Ok(slf.clone())
    }

    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn divide(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        self.div(py, other, rounding_mode)
    }

    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn divide_<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::div_(slf, other, rounding_mode)
    }

    fn maximum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = arg(other, "other")?;
        let a = &self.t;
        Ok(nogil(py, a.numel().max(b.numel()), || a.maximum(&b))
            .py()?
            .into())
    }

    fn minimum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = arg(other, "other")?;
        let a = &self.t;
        Ok(nogil(py, a.numel().max(b.numel()), || a.minimum(&b))
            .py()?
            .into())
    }

    #[pyo3(signature = (min = None, max = None))]
    fn clip(
        &self,
        py: Python<'_>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        self.clamp(py, min, max)
    }

    #[pyo3(signature = (min = None, max = None))]
    fn clip_<'py>(
        slf: &Bound<'py, Self>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::clamp_(slf, min, max)
    }

    /// `where(condition, other)`: self where condition, else other.
    fn r#where(
        &self,
        py: Python<'_>,
        condition: PyRef<'_, PyTensor>,
        other: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        let y = arg(other, "other")?;
        let (x, c) = (&self.t, &condition.t);
        Ok(nogil(py, x.numel().max(y.numel()), || x.r#where(c, &y))
            .py()?
            .into())
    }

    #[pyo3(signature = (other, rtol = 1e-05, atol = 1e-08, equal_nan = false))]
    fn isclose(
        &self,
        py: Python<'_>,
        other: PyRef<'_, PyTensor>,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> PyResult<TensorOut> {
        let (a, b) = (&self.t, &other.t);
        Ok(nogil(py, a.numel(), || a.isclose(b, rtol, atol, equal_nan))
            .py()?
            .into())
    }

    #[pyo3(signature = (other, rtol = 1e-05, atol = 1e-08, equal_nan = false))]
    fn allclose(
        &self,
        py: Python<'_>,
        other: PyRef<'_, PyTensor>,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> PyResult<bool> {
        let (a, b) = (&self.t, &other.t);
        nogil(py, a.numel(), || a.allclose(b, rtol, atol, equal_nan)).py()
    }

    fn equal(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<bool> {
        let (a, b) = (&self.t, &other.t);
        nogil(py, a.numel(), || a.equal(b)).py()
    }

    fn fill_<'py>(slf: &Bound<'py, Self>, value: &Bound<'_, PyAny>) -> PyResult<Bound<'py, Self>> {
        if let Ok(v) = value.cast::<PyTensor>() {
            let d = v.get().t.ndim();
            if d != 0 {
                return Err(PyRuntimeError::new_err(format!(
                    "fill_ only supports 0-dimension value tensor but got tensor with {d} dimensions."
                )));
            }
        }
        let v = number(Some(value), "value", Scalar::Int(0))?;
        let t = &slf.get().t;
        nogil(slf.py(), t.numel(), || t.fill_(v)).py()?;
        Ok(slf.clone())
    }

    fn zero_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().t;
        nogil(slf.py(), t.numel(), || t.zero_()).py()?;
        Ok(slf.clone())
    }

    #[pyo3(signature = (src, non_blocking = false))]
    fn copy_<'py>(
        slf: &Bound<'py, Self>,
        src: PyRef<'_, PyTensor>,
        non_blocking: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = non_blocking;
        let (t, s) = (&slf.get().t, &src.t);
        nogil(slf.py(), t.numel(), || t.copy_(s)).py()?;
        Ok(slf.clone())
    }

    /// Writes `result` into this tensor for a module function's `out=`.
    fn _store_out<'py>(
        slf: &Bound<'py, Self>,
        result: PyRef<'_, PyTensor>,
    ) -> PyResult<Bound<'py, Self>> {
        let (t, r) = (&slf.get().t, &result.t);
        nogil(slf.py(), t.numel(), || t.store_(r)).py()?;
        Ok(slf.clone())
    }
}

/// `_wrap_number(x)`: a Python number as a zero-dim tensor that promotes
/// like a Python scalar (for module functions called with a number first).
#[pyfunction]
fn _wrap_number(x: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    Ok(arg(x, "input")?.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_wrap_number, m)?)?;
    m.add_function(wrap_pyfunction!(view_as_real, m)?)?;
    m.add_function(wrap_pyfunction!(view_as_complex, m)?)?;
    m.add_function(wrap_pyfunction!(complex, m)?)?;
    m.add_function(wrap_pyfunction!(polar, m)?)?;
    Ok(())
}
