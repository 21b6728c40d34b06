//! Elementwise operations on `Tensor`: Python operators (with reflected and
//! in-place forms), pointwise methods and their `_` in-place forms.
//!
//! Everything here converts arguments and releases the GIL for big work;
//! the ops themselves live in the core crate (`ops/pointwise`).

use crate::convert::{number_arg as number, operand, tensor_arg as arg};
use crate::errors::IntoPyResult;
use crate::routed::batched_method;
use crate::tensor::{nogil, nogil_ok, wrap_any, PyTensor, TensorOut};
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
    let a = &slf.get().tensor();
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
                    let a = &self.tensor();
                    let out = nogil(py, a.numel().max(b.numel()), || a.$f(&b)).py()?;
                    new_obj(py, out)
                }

                fn $rop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let Some(b) = operand(other)? else {
                        return Ok(py.NotImplemented());
                    };
                    let a = &self.tensor();
                    let reflected: fn(&Tensor, &Tensor) -> ferrograd::Result<Tensor> = $reflected;
                    let out = nogil(py, a.numel().max(b.numel()), || reflected(a, &b)).py()?;
                    new_obj(py, out)
                }

                fn $iop(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
                    let b = arg(other, "other")?;
                    let a = &self.tensor();
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
    __lshift__ __rlshift__ __ilshift__ => bitwise_left_shift bitwise_left_shift_, |a, b| b.bitwise_left_shift(a);
    __rshift__ __rrshift__ __irshift__ => bitwise_right_shift bitwise_right_shift_, |a, b| b.bitwise_right_shift(a);
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
                    let a = &self.tensor();
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

/// The complex-number methods that have no in-place form.
#[pymethods]
impl PyTensor {
    /// Complex conjugate of each element.
    ///
    /// The result is computed into new memory (torch returns a lazily conjugated
    /// view); a real tensor is returned as is. See :func:`ferrograd.conj`.
    fn conj(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.conj()).py()?.into())
    }
    /// ``x / abs(x)`` for complex elements (0 where ``x`` is 0); :meth:`sign` for real ones.
    ///
    /// See :func:`ferrograd.sgn`.
    fn sgn(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.sgn()).py()?.into())
    }
    /// Argument (phase) of each element in radians; 0 or pi for real tensors.
    ///
    /// See :func:`ferrograd.angle`.
    fn angle(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.angle()).py()?.into())
    }
    /// This tensor's values with no pending conjugation.
    ///
    /// ferrograd conjugates eagerly (:meth:`is_conj` is always False), so this
    /// returns a tensor equal to ``self``. See :func:`ferrograd.resolve_conj`.
    fn resolve_conj(&self) -> TensorOut {
        self.tensor().resolve_conj().into()
    }
    /// This tensor's values with no pending negation: ferrograd has no lazy
    /// negation, so this returns ``self``.
    ///
    /// See :func:`ferrograd.resolve_neg`.
    fn resolve_neg(&self) -> TensorOut {
        self.tensor().into()
    }
    /// Whether this tensor is a lazily conjugated view: always False, as
    /// :meth:`conj` conjugates eagerly.
    ///
    /// See :func:`ferrograd.is_conj`.
    fn is_conj(&self) -> bool {
        self.tensor().is_conj()
    }
    /// Whether this tensor is a lazily negated view: always False in ferrograd.
    ///
    /// See :func:`ferrograd.is_neg`.
    fn is_neg(&self) -> bool {
        false
    }
    /// The real parts of a complex tensor, as a real view sharing its memory
    /// (``self`` itself for a real tensor).
    ///
    /// Assigning to it writes the real parts in place.
    ///
    /// Example:
    ///     >>> z = ferrograd.tensor([1 + 2j, 3 - 1j])
    ///     >>> z.real
    ///     tensor([1., 3.])
    ///     >>> z.real = ferrograd.tensor([0.0, 0.0])
    ///     >>> z
    ///     tensor([0.+2.j, 0.-1.j])
    #[getter]
    fn get_real(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().real().py()?.into())
    }
    #[setter]
    fn set_real(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = arg(value, "real")?;
        self.tensor().real().py()?.copy_(&v).py()
    }
    /// The imaginary parts of a complex tensor, as a real view sharing its
    /// memory (an error for a real tensor).
    ///
    /// Assigning to it writes the imaginary parts in place.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1 + 2j, 3 - 1j]).imag
    ///     tensor([ 2., -1.])
    #[getter]
    fn get_imag(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().imag().py()?.into())
    }
    #[setter]
    fn set_imag(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = arg(value, "imag")?;
        self.tensor().imag().py()?.copy_(&v).py()
    }
}

/// Bool-valued predicates (never fail).
macro_rules! predicates {
    ($($(#[doc = $doc:literal])* $name:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                fn $name(&self, py: Python<'_>) -> PyResult<TensorOut> {
                    let t = &self.tensor();
                    Ok(nogil_ok(py, t.numel(), || t.$name())?.into())
                }
            )*
        }
    };
}

predicates! {
    /// Bool tensor, True where an element is NaN.
    ///
    /// See :func:`ferrograd.isnan`.
    isnan;
    /// Bool tensor, True where an element is positive or negative infinity.
    ///
    /// See :func:`ferrograd.isinf`.
    isinf;
    /// Bool tensor, True where an element is neither infinite nor NaN.
    ///
    /// See :func:`ferrograd.isfinite`.
    isfinite;
    /// Bool tensor, True where an element is zero.
    ///
    /// See :func:`ferrograd.logical_not`.
    logical_not;
}

/// Bool-valued predicates that refuse some dtypes (complex ones).
macro_rules! fallible_predicates {
    ($($(#[doc = $doc:literal])* $name:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                fn $name(&self, py: Python<'_>) -> PyResult<TensorOut> {
                    let t = &self.tensor();
                    Ok(nogil(py, t.numel(), || t.$name()).py()?.into())
                }
            )*
        }
    };
}

fallible_predicates! {
    /// Bool tensor, True where an element is positive infinity.
    ///
    /// See :func:`ferrograd.isposinf`.
    isposinf;
    /// Bool tensor, True where an element is negative infinity.
    ///
    /// See :func:`ferrograd.isneginf`.
    isneginf;
    /// Bool tensor, True where an element's sign bit is set (including ``-0.0``).
    ///
    /// See :func:`ferrograd.signbit`.
    signbit;
}

/// Binary methods `$name(other)` and `$name_(other)`.
macro_rules! binary_methods {
    ($($(#[doc = $doc:literal])* $name:ident $name_:ident => $f:ident $f_:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                fn $name(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let py = slf.py();
                    let b = match arg(other, "other") {
                        Ok(b) => b,
                        Err(e) => return batched_method(py, stringify!($name), (slf, other), e),
                    };
                    let a = &slf.get().tensor();
                    new_obj(py, nogil(py, a.numel().max(b.numel()), || a.$f(&b)).py()?)
                }

                #[doc = concat!("In-place version of :meth:`Tensor.", stringify!($name), "`.")]
                fn $name_(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                    let py = slf.py();
                    let b = match arg(other, "other") {
                        Ok(b) => b,
                        Err(e) => return batched_method(py, stringify!($name_), (slf, other), e),
                    };
                    let a = &slf.get().tensor();
                    nogil(py, a.numel(), || a.$f_(&b)).py()?;
                    Ok(slf.clone().into_any().unbind())
                }
            )*
        }
    };
}

binary_methods! {
    /// Product of ``self`` and ``other`` (a tensor or a number), broadcasting.
    ///
    /// See :func:`ferrograd.mul`.
    mul mul_ => mul mul_;
    /// Alias for :meth:`Tensor.mul`.
    multiply multiply_ => mul mul_;
    /// Alias for :meth:`Tensor.div`.
    true_divide true_divide_ => div div_;
    /// ``self / other`` rounded down to an integer value.
    ///
    /// See :func:`ferrograd.floor_divide`.
    floor_divide floor_divide_ => floor_divide floor_divide_;
    /// Python-style remainder of ``self / other`` (it takes the sign of ``other``).
    ///
    /// See :func:`ferrograd.remainder`.
    remainder remainder_ => remainder remainder_;
    /// C-style remainder of ``self / other`` (it takes the sign of ``self``).
    ///
    /// See :func:`ferrograd.fmod`.
    fmod fmod_ => fmod fmod_;
    /// Elementwise arctangent of ``self / other``, in the quadrant given by both signs.
    ///
    /// See :func:`ferrograd.atan2`.
    atan2 atan2_ => atan2 atan2_;
    /// Alias for :meth:`Tensor.atan2`.
    arctan2 arctan2_ => atan2 atan2_;
    /// Bool tensor, True where ``self == other``.
    ///
    /// See :func:`ferrograd.eq`.
    eq eq_ => eq eq_;
    /// Bool tensor, True where ``self != other``.
    ///
    /// See :func:`ferrograd.ne`.
    ne ne_ => ne ne_;
    /// Alias for :meth:`Tensor.ne`.
    not_equal not_equal_ => ne ne_;
    /// Bool tensor, True where ``self < other``.
    ///
    /// See :func:`ferrograd.lt`.
    lt lt_ => lt lt_;
    /// Alias for :meth:`Tensor.lt`.
    less less_ => lt lt_;
    /// Bool tensor, True where ``self <= other``.
    ///
    /// See :func:`ferrograd.le`.
    le le_ => le le_;
    /// Alias for :meth:`Tensor.le`.
    less_equal less_equal_ => le le_;
    /// Bool tensor, True where ``self > other``.
    ///
    /// See :func:`ferrograd.gt`.
    gt gt_ => gt gt_;
    /// Alias for :meth:`Tensor.gt`.
    greater greater_ => gt gt_;
    /// Bool tensor, True where ``self >= other``.
    ///
    /// See :func:`ferrograd.ge`.
    ge ge_ => ge ge_;
    /// Alias for :meth:`Tensor.ge`.
    greater_equal greater_equal_ => ge ge_;
    /// Bool tensor, True where both ``self`` and ``other`` are nonzero.
    ///
    /// See :func:`ferrograd.logical_and`.
    logical_and logical_and_ => logical_and logical_and_;
    /// Bool tensor, True where ``self`` or ``other`` is nonzero.
    ///
    /// See :func:`ferrograd.logical_or`.
    logical_or logical_or_ => logical_or logical_or_;
    /// Bool tensor, True where exactly one of ``self`` and ``other`` is nonzero.
    ///
    /// See :func:`ferrograd.logical_xor`.
    logical_xor logical_xor_ => logical_xor logical_xor_;
    /// Bitwise AND of integer or bool tensors.
    ///
    /// See :func:`ferrograd.bitwise_and`.
    bitwise_and bitwise_and_ => bitwise_and bitwise_and_;
    /// Bitwise OR of integer or bool tensors.
    ///
    /// See :func:`ferrograd.bitwise_or`.
    bitwise_or bitwise_or_ => bitwise_or bitwise_or_;
    /// Bitwise XOR of integer or bool tensors.
    ///
    /// See :func:`ferrograd.bitwise_xor`.
    bitwise_xor bitwise_xor_ => bitwise_xor bitwise_xor_;
    /// Shifts the bits of an integer tensor left by ``other``.
    ///
    /// See :func:`ferrograd.bitwise_left_shift`.
    bitwise_left_shift bitwise_left_shift_ => bitwise_left_shift bitwise_left_shift_;
    /// Shifts the bits of an integer tensor right by ``other`` (arithmetic shift).
    ///
    /// See :func:`ferrograd.bitwise_right_shift`.
    bitwise_right_shift bitwise_right_shift_ => bitwise_right_shift bitwise_right_shift_;
    /// Greatest common divisor of integer tensors.
    ///
    /// See :func:`ferrograd.gcd`.
    gcd gcd_ => gcd gcd_;
    /// Least common multiple of integer tensors.
    ///
    /// See :func:`ferrograd.lcm`.
    lcm lcm_ => lcm lcm_;
    /// ``sqrt(self**2 + other**2)`` for each pair of elements, without overflow.
    ///
    /// See :func:`ferrograd.hypot`.
    hypot hypot_ => hypot hypot_;
    /// ``log(exp(self) + exp(other))`` for each pair of elements, without overflow.
    ///
    /// See :func:`ferrograd.logaddexp`.
    logaddexp logaddexp_ => logaddexp logaddexp_;
    /// ``log2(2**self + 2**other)`` for each pair of elements, without overflow.
    ///
    /// See :func:`ferrograd.logaddexp2`.
    logaddexp2 logaddexp2_ => logaddexp2 logaddexp2_;
    /// ``self * log(other)``, 0 where ``self`` is 0 and ``other`` is not NaN.
    ///
    /// See :func:`ferrograd.xlogy`.
    xlogy xlogy_ => xlogy xlogy_;
    /// ``self * log1p(other)``, 0 where ``self`` is 0 and ``other`` is not NaN.
    ///
    /// See :func:`ferrograd.special.xlog1py`.
    _special_xlog1py _special_xlog1py_ => xlog1py xlog1py_;
    /// The magnitude of ``self`` with the sign of ``other``, for each element.
    ///
    /// See :func:`ferrograd.copysign`.
    copysign copysign_ => copysign copysign_;
    /// The next representable float after ``self`` toward ``other``.
    ///
    /// See :func:`ferrograd.nextafter`.
    nextafter nextafter_ => nextafter nextafter_;
    /// The regularized lower incomplete gamma function ``P(self, other)``.
    ///
    /// See :func:`ferrograd.igamma`.
    igamma igamma_ => igamma igamma_;
    /// The regularized upper incomplete gamma function ``Q(self, other)``.
    ///
    /// See :func:`ferrograd.igammac`.
    igammac igammac_ => igammac igammac_;
}

/// Methods `name(other, *, alpha=1)` and their in-place forms `name_`,
/// calling the core's `alpha=` ops `$f`/`$f_`.
macro_rules! alpha_methods {
    ($($(#[doc = $doc:literal])* $name:ident $name_:ident => $f:path, $f_:path;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                #[pyo3(signature = (other, *, alpha = None))]
                fn $name(
                    &self,
                    py: Python<'_>,
                    other: &Bound<'_, PyAny>,
                    alpha: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<TensorOut> {
                    alpha_op(py, &self.tensor(), other, alpha, $f)
                }

                #[doc = concat!("In-place version of :meth:`Tensor.", stringify!($name), "`.")]
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
    /// ``self + alpha * other``, broadcasting; ``other`` may be a tensor or a number.
    ///
    /// See :func:`ferrograd.add`.
    add add_ => Tensor::add_scaled, Tensor::add_scaled_;
    /// ``self - alpha * other``, broadcasting; ``other`` may be a tensor or a number.
    ///
    /// See :func:`ferrograd.sub`.
    sub sub_ => Tensor::sub_scaled, Tensor::sub_scaled_;
    /// Alias for :meth:`Tensor.sub`.
    subtract subtract_ => Tensor::sub_scaled, Tensor::sub_scaled_;
}

/// Out-of-place/in-place method pairs: `$name(...)` returns a new tensor
/// from core `$f`, `$name_(...)` writes into self with `$f_` and returns
/// self. Both take the Python arguments `$arg` (signature `$sig`), bind
/// the core arguments with the `parse` statements and pass `$a`. The GIL
/// is released by the size of self (or of `work` when given, for an
/// out-of-place result that may broadcast larger).
macro_rules! method_pairs {
    ($($(#[doc = $doc:literal])* $name:ident $name_:ident => $f:ident $f_:ident $sig:tt
        ($($arg:ident: $ty:ty),*) { $($parse:stmt;)* } ($($a:expr),*) $(work $w:expr)?;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                #[pyo3(signature = $sig)]
                fn $name(&self, py: Python<'_>, $($arg: $ty),*) -> PyResult<TensorOut> {
                    $($parse;)*
                    let x = &self.tensor();
                    let work = x.numel()$(.max($w))?;
                    Ok(nogil(py, work, || x.$f($($a),*)).py()?.into())
                }

                #[doc = concat!("In-place version of :meth:`Tensor.", stringify!($name), "`.")]
                #[pyo3(signature = $sig)]
                fn $name_<'py>(slf: &Bound<'py, Self>, $($arg: $ty),*) -> PyResult<Bound<'py, Self>> {
                    $($parse;)*
                    let x = &slf.get().tensor();
                    nogil(slf.py(), x.numel(), || x.$f_($($a),*)).py()?;
                    Ok(slf.clone())
                }
            )*
        }
    };
}

method_pairs! {
    /// ``self`` raised to ``exponent`` (a tensor or a number), elementwise.
    ///
    /// See :func:`ferrograd.pow`.
    pow pow_ => pow pow_ (exponent) (exponent: &Bound<'_, PyAny>) {
        let b = arg(exponent, "exponent")?;
    } (&b) work b.numel();
    /// Each element rounded half to even, at ``decimals`` decimal places.
    ///
    /// See :func:`ferrograd.round`.
    round round_ => round_decimals round_decimals_ (decimals = 0) (decimals: i64) {} (decimals);
    /// Each element limited to ``[min, max]`` (either bound may be None, a number or a tensor).
    ///
    /// See :func:`ferrograd.clamp`.
    clamp clamp_ => clamp clamp_ (min = None, max = None)
        (min: Option<&Bound<'_, PyAny>>, max: Option<&Bound<'_, PyAny>>) {
        let lo = opt_arg(min, "min")?;
        let hi = opt_arg(max, "max")?;
    } (lo.as_ref(), hi.as_ref());
    /// Each element limited from below by ``min``.
    ///
    /// See :func:`ferrograd.clamp_min`.
    clamp_min clamp_min_ => clamp_min clamp_min_ (min) (min: &Bound<'_, PyAny>) {
        let lo = arg(min, "min")?;
    } (&lo);
    /// Each element limited from above by ``max``.
    ///
    /// See :func:`ferrograd.clamp_max`.
    clamp_max clamp_max_ => clamp_max clamp_max_ (max) (max: &Bound<'_, PyAny>) {
        let hi = arg(max, "max")?;
    } (&hi);
    /// Linear interpolation ``self + weight * (end - self)``.
    ///
    /// See :func:`ferrograd.lerp`.
    lerp lerp_ => lerp lerp_ (end, weight) (end: PyRef<'_, PyTensor>, weight: &Bound<'_, PyAny>) {
        let w = arg(weight, "weight")?;
        let e = &end.tensor();
    } (e, &w) work e.numel();
    /// ``self + value * tensor1 * tensor2``.
    ///
    /// See :func:`ferrograd.addcmul`.
    addcmul addcmul_ => addcmul addcmul_ (tensor1, tensor2, *, value = None)
        (tensor1: &Bound<'_, PyAny>, tensor2: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>) {
        let a = arg(tensor1, "tensor1")?;
        let b = arg(tensor2, "tensor2")?;
        let v = number(value, "value", Scalar::Int(1))?;
    } (&a, &b, v);
    /// ``self + value * tensor1 / tensor2``.
    ///
    /// See :func:`ferrograd.addcdiv`.
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
        let a = &self.tensor();
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
        let a = &self.tensor();
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
        let a = &self.tensor();
        nogil(py, a.numel(), || a.pow_(&b)).py()
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.neg()).py()?.into())
    }

    fn __pos__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        slf.get().tensor().positive().py()?;
        Ok(slf.clone().into_any().unbind())
    }

    /// Returns ``self`` (unary plus); an error for bool tensors.
    ///
    /// See :func:`ferrograd.positive`.
    fn positive(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Self::__pos__(slf)
    }

    fn __abs__(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.abs()).py()?.into())
    }

    fn __invert__(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.bitwise_not()).py()?.into())
    }

    /// In-place version of :meth:`Tensor.logical_not` (writes 1 and 0 in ``self``'s dtype).
    fn logical_not_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().tensor();
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
        alpha_op(py, &self.tensor(), other, alpha, Tensor::rsub_scaled)
    }

    /// ``self / other``, with optional rounding.
    ///
    /// ``rounding_mode`` is None (true division, giving a floating result),
    /// ``"trunc"`` (toward zero) or ``"floor"`` (toward minus infinity).
    /// See :func:`ferrograd.div`.
    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn div(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let b = arg(other, "other")?;
        let mode = self::rounding_mode(rounding_mode)?;
        let a = &self.tensor();
        Ok(nogil(py, a.numel().max(b.numel()), || a.div_mode(&b, mode))
            .py()?
            .into())
    }

    /// In-place version of :meth:`Tensor.div`.
    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn div_<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let b = arg(other, "other")?;
        let mode = self::rounding_mode(rounding_mode)?;
        let a = &slf.get().tensor();
        nogil(slf.py(), a.numel(), || a.div_mode_(&b, mode)).py()?;
        Ok(slf.clone())
    }

    /// Alias for :meth:`Tensor.div`.
    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn divide(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        self.div(py, other, rounding_mode)
    }

    /// In-place version of :meth:`Tensor.divide`.
    #[pyo3(signature = (other, *, rounding_mode = None))]
    fn divide_<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::div_(slf, other, rounding_mode)
    }

    /// Elementwise maximum of ``self`` and ``other``, broadcasting (NaN propagates).
    ///
    /// See :func:`ferrograd.maximum`.
    fn maximum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = arg(other, "other")?;
        let a = &self.tensor();
        Ok(nogil(py, a.numel().max(b.numel()), || a.maximum(&b))
            .py()?
            .into())
    }

    /// Elementwise minimum of ``self`` and ``other``, broadcasting (NaN propagates).
    ///
    /// See :func:`ferrograd.minimum`.
    fn minimum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = arg(other, "other")?;
        let a = &self.tensor();
        Ok(nogil(py, a.numel().max(b.numel()), || a.minimum(&b))
            .py()?
            .into())
    }

    /// Alias for :meth:`Tensor.clamp`.
    #[pyo3(signature = (min = None, max = None))]
    fn clip(
        &self,
        py: Python<'_>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        self.clamp(py, min, max)
    }

    /// In-place version of :meth:`Tensor.clip`.
    #[pyo3(signature = (min = None, max = None))]
    fn clip_<'py>(
        slf: &Bound<'py, Self>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::clamp_(slf, min, max)
    }

    /// ``self`` where ``condition`` is True, else ``other`` (a tensor or a number).
    ///
    /// See :func:`ferrograd.where`.
    fn r#where(
        &self,
        py: Python<'_>,
        condition: PyRef<'_, PyTensor>,
        other: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        let y = arg(other, "other")?;
        let (x, c) = (&self.tensor(), &condition.tensor());
        Ok(nogil(py, x.numel().max(y.numel()), || x.r#where(c, &y))
            .py()?
            .into())
    }

    /// Bool tensor, True where ``|self - other| <= atol + rtol * |other|``.
    ///
    /// See :func:`ferrograd.isclose`.
    #[pyo3(signature = (other, rtol = 1e-05, atol = 1e-08, equal_nan = false))]
    fn isclose(
        &self,
        py: Python<'_>,
        other: PyRef<'_, PyTensor>,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> PyResult<TensorOut> {
        let (a, b) = (&self.tensor(), &other.tensor());
        Ok(nogil(py, a.numel(), || a.isclose(b, rtol, atol, equal_nan))
            .py()?
            .into())
    }

    /// Whether :meth:`isclose` holds for every element (a Python bool).
    ///
    /// See :func:`ferrograd.allclose`.
    #[pyo3(signature = (other, rtol = 1e-05, atol = 1e-08, equal_nan = false))]
    fn allclose(
        &self,
        py: Python<'_>,
        other: PyRef<'_, PyTensor>,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> PyResult<bool> {
        let (a, b) = (&self.tensor(), &other.tensor());
        nogil(py, a.numel(), || a.allclose(b, rtol, atol, equal_nan)).py()
    }

    /// Whether ``other`` has the same shape and the same values (a Python bool).
    ///
    /// See :func:`ferrograd.equal`.
    fn equal(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<bool> {
        let (a, b) = (&self.tensor(), &other.tensor());
        nogil(py, a.numel(), || a.equal(b)).py()
    }

    /// Fills ``self`` with ``value`` in place and returns ``self``.
    ///
    /// Args:
    ///     value (Number or Tensor): the value; a tensor must be 0-dimensional.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(3).fill_(2.5)
    ///     tensor([2.5000, 2.5000, 2.5000])
    fn fill_<'py>(slf: &Bound<'py, Self>, value: &Bound<'_, PyAny>) -> PyResult<Bound<'py, Self>> {
        if let Ok(v) = value.cast::<PyTensor>() {
            let d = v.get().tensor().ndim();
            if d != 0 {
                return Err(PyRuntimeError::new_err(format!(
                    "fill_ only supports 0-dimension value tensor but got tensor with {d} dimensions."
                )));
            }
        }
        let v = number(Some(value), "value", Scalar::Int(0))?;
        let t = &slf.get().tensor();
        nogil(slf.py(), t.numel(), || t.fill_(v)).py()?;
        Ok(slf.clone())
    }

    /// Fills ``self`` with zeros in place and returns ``self``.
    ///
    /// Example:
    ///     >>> ferrograd.ones(3).zero_()
    ///     tensor([0., 0., 0.])
    fn zero_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().tensor();
        nogil(slf.py(), t.numel(), || t.zero_()).py()?;
        Ok(slf.clone())
    }

    /// Copies the values of ``src`` into ``self`` in place and returns ``self``.
    ///
    /// ``src`` broadcasts to ``self``'s shape and is converted to ``self``'s
    /// dtype. The copy is recorded by autograd: gradients flow to ``src``.
    ///
    /// Args:
    ///     src (Tensor): the values to copy.
    ///     non_blocking (bool): accepted for compatibility; ignored. Default: False.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(2, 2)
    ///     >>> t.copy_(ferrograd.tensor([1, 2]))
    ///     tensor([[1., 2.],
    ///             [1., 2.]])
    #[pyo3(signature = (src, non_blocking = false))]
    fn copy_<'py>(
        slf: &Bound<'py, Self>,
        src: PyRef<'_, PyTensor>,
        non_blocking: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = non_blocking;
        let (t, s) = (&slf.get().tensor(), &src.tensor());
        nogil(slf.py(), t.numel(), || t.copy_(s)).py()?;
        Ok(slf.clone())
    }

    /// Writes `result` into this tensor for a module function's `out=`.
    fn _store_out<'py>(
        slf: &Bound<'py, Self>,
        result: PyRef<'_, PyTensor>,
    ) -> PyResult<Bound<'py, Self>> {
        let (t, r) = (&slf.get().tensor(), &result.tensor());
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
    Ok(())
}
