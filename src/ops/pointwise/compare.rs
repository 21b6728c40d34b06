//! Comparisons, logical and bitwise ops, closeness tests.

use super::{all_true, assign, unsupported};
use crate::autograd::{captured, check_write};
use crate::kernels::iter::{apply2, map2};
use crate::ops::binary::{inplace_operand, promote2};
use crate::{dispatch, DType, Element, Error, Result, Tensor};

/// The method `$name(&self, other)`: `$body` over both operands promoted
/// to their common dtype `$dt`, traced as `aten::$name` and recorded by a
/// capture.
macro_rules! promoted_op {
    ($doc:literal $name:ident, |$dt:ident, $a:ident, $b:ident| $body:expr) => {
        #[doc = $doc]
        pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
            captured!($name (&self, other: &Tensor) -> Tensor {
                let _span = crate::trace::op(concat!("aten::", stringify!($name)), &[self, other]);
                let ($dt, $a, $b) = promote2(self, other);
                $body
            })
        }
    };
}

/// Defines comparison ops: computed in the promoted dtype, bool results.
/// The in-place forms store 0/1 in the tensor's own dtype. Equality takes
/// every dtype; the ordering comparisons refuse complex ones, as torch.
macro_rules! comparisons {
    (@kernel any $name:ident $op:tt $dt:ident $a:ident $b:ident) => {
        dispatch!($dt, T => map2::<T, T, bool>(&$a, &$b, |x, y| x $op y))
    };
    (@kernel ordered $name:ident $op:tt $dt:ident $a:ident $b:ident) => {
        crate::dispatch_real!($dt, T => map2::<T, T, bool>(&$a, &$b, |x, y| x $op y),
            else Err(Error::not_implemented(concat!(stringify!($name), "_cpu"), $dt)))
    };
    ($($doc:literal $name:ident $name_:ident $op:tt $kind:ident;)*) => {
        impl Tensor {
            $(
                promoted_op!($doc $name, |dt, a, b| comparisons!(@kernel $kind $name $op dt a b));

                #[doc = concat!("In-place form of `", stringify!($name), "`.")]
                pub fn $name_(&self, other: &Tensor) -> Result<()> {
                    captured!($name_ (&self, other: &Tensor) -> () {
                        assign(stringify!($name_), self, &self.$name(other)?)
                    })
                }
            )*
        }
    };
}

comparisons! {
    "`eq(other)` (`==`): elementwise equality." eq eq_ == any;
    "`ne(other)` (`!=`, alias `not_equal`)." ne ne_ != any;
    "`lt(other)` (`<`, alias `less`)." lt lt_ < ordered;
    "`le(other)` (`<=`, alias `less_equal`)." le le_ <= ordered;
    "`gt(other)` (`>`, alias `greater`)." gt gt_ > ordered;
    "`ge(other)` (`>=`, alias `greater_equal`)." ge ge_ >= ordered;
}

/// Defines logical ops: operands are read as truth values (non-zero),
/// results are bool; the in-place forms store 0/1 in the tensor's dtype.
macro_rules! logical {
    ($($doc:literal $name:ident $name_:ident |$x:ident, $y:ident| $body:expr;)*) => {
        impl Tensor {
            $(
                #[doc = $doc]
                pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                    captured!($name (&self, other: &Tensor) -> Tensor {
                        let _span = crate::trace::op(concat!("aten::", stringify!($name)), &[self, other]);
                        let (a, b) = (self.to_dtype(DType::Bool), other.to_dtype(DType::Bool));
                        map2::<bool, bool, bool>(&a, &b, |$x, $y| $body)
                    })
                }

                #[doc = concat!("In-place form of `", stringify!($name), "`.")]
                pub fn $name_(&self, other: &Tensor) -> Result<()> {
                    captured!($name_ (&self, other: &Tensor) -> () {
                        assign(stringify!($name_), self, &self.$name(other)?)
                    })
                }
            )*
        }
    };
}

logical! {
    "`logical_and(other)`." logical_and logical_and_ |x, y| x & y;
    "`logical_or(other)`." logical_or logical_or_ |x, y| x | y;
    "`logical_xor(other)`." logical_xor logical_xor_ |x, y| x ^ y;
}

/// Defines bitwise ops on bool and integer tensors (`&`, `|`, `^`).
macro_rules! bitwise {
    ($($doc:literal $name:ident $name_:ident $op:tt;)*) => {
        impl Tensor {
            $(
                promoted_op!($doc $name, |dt, a, b| match dt {
                    DType::Bool => map2::<bool, bool, bool>(&a, &b, |x, y| x $op y),
                    DType::Int32 => map2::<i32, i32, i32>(&a, &b, |x, y| x $op y),
                    DType::Int64 => map2::<i64, i64, i64>(&a, &b, |x, y| x $op y),
                    _ => Err(unsupported(stringify!($name), dt)),
                });

                #[doc = concat!("In-place form of `", stringify!($name), "`.")]
                pub fn $name_(&self, other: &Tensor) -> Result<()> {
                    let dt = self.dtype();
                    if dt.is_floating_point() {
                        return Err(unsupported(stringify!($name_), dt));
                    }
                    check_write(self)?;
                    let b = inplace_operand(stringify!($name_), self, other)?;
                    match dt {
                        DType::Bool => apply2::<bool, bool>(self, &b, |x, y| x $op y),
                        DType::Int32 => apply2::<i32, i32>(self, &b, |x, y| x $op y),
                        DType::Int64 => apply2::<i64, i64>(self, &b, |x, y| x $op y),
                        _ => Err(unsupported(stringify!($name_), dt)),
                    }
                }
            )*
        }
    };
}

bitwise! {
    "`bitwise_and(other)` (`&`)." bitwise_and bitwise_and_ &;
    "`bitwise_or(other)` (`|`)." bitwise_or bitwise_or_ |;
    "`bitwise_xor(other)` (`^`)." bitwise_xor bitwise_xor_ ^;
}

impl Tensor {
    /// `isclose(other, rtol, atol, equal_nan)`: `|a - b| <= atol + rtol * |b|`
    /// elementwise (infinities close only to themselves). Both tensors must
    /// have the same dtype, as torch.
    pub fn isclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
        if self.dtype() != other.dtype() {
            return Err(Error::runtime(format!(
                "isclose(): expected both tensors to have the same dtype, but got {} and {}",
                self.dtype(),
                other.dtype()
            )));
        }
        if rtol < 0.0 || atol < 0.0 || rtol.is_nan() || atol.is_nan() {
            return Err(Error::runtime(format!(
                "isclose(): rtol and atol must be non-negative, but got rtol={rtol} and atol={atol}"
            )));
        }
        if self.dtype() == DType::Bool {
            return self.eq(other);
        }
        crate::dispatch_complex!(self.dtype(), T => map2::<T, T, bool>(self, other, move |x, y| {
            close_complex(x.to_complex(), y.to_complex(), rtol, atol, equal_nan)
        }), else dispatch!(self.dtype(), T => map2::<T, T, bool>(self, other, move |x, y| {
            close(x.to_f64(), y.to_f64(), rtol, atol, equal_nan)
        })))
    }

    /// `allclose(...)`: whether [`Tensor::isclose`] holds everywhere.
    pub fn allclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
        Ok(all_true(&self.isclose(other, rtol, atol, equal_nan)?))
    }

    /// `equal(other)`: same shape and equal values (NaN never equals).
    pub fn equal(&self, other: &Tensor) -> Result<bool> {
        if self.shape() != other.shape() {
            return Ok(false);
        }
        Ok(all_true(&self.eq(other)?))
    }
}

#[inline(always)]
/// [`close`] for complex numbers, with complex magnitudes; a number is NaN
/// when either part is.
fn close_complex(
    x: crate::Complex<f64>,
    y: crate::Complex<f64>,
    rtol: f64,
    atol: f64,
    equal_nan: bool,
) -> bool {
    if x == y {
        return true;
    }
    let (xn, yn) = (x.is_nan(), y.is_nan());
    if xn || yn {
        return equal_nan && xn && yn;
    }
    let diff = (x - y).norm();
    diff.is_finite() && diff <= atol + rtol * y.norm()
}

fn close(x: f64, y: f64, rtol: f64, atol: f64, equal_nan: bool) -> bool {
    if x == y {
        return true;
    }
    if x.is_nan() || y.is_nan() {
        return equal_nan && x.is_nan() && y.is_nan();
    }
    let diff = (x - y).abs();
    diff.is_finite() && diff <= atol + rtol * y.abs()
}
