//! [`Element`]: the Rust type that stores each [`DType`]'s elements, so
//! kernels are written once, generically, and converted between dtypes
//! with torch's casting rules.

use super::dtype::{Category, Complex, DType};
use std::fmt;

/// A Rust type that stores the elements of one [`DType`].
///
/// Conversions go through `f64`/`i64`/`Complex<f64>` so generic kernels can
/// cast between any two element types with torch's semantics (float to int
/// truncates toward zero; complex to real keeps the real part; anything to
/// bool is `!= 0`). Elements are not ordered: complex numbers have no
/// order, so kernels that compare ask for [`RealElement`].
pub trait Element: Copy + Send + Sync + PartialEq + fmt::Debug + Default + 'static {
    /// The dtype whose elements this type stores.
    const DTYPE: DType;
    /// The value as `f64` (complex: the real part; bool: 0 or 1).
    fn to_f64(self) -> f64;
    /// The value as `i64` (floats truncate toward zero).
    fn to_i64(self) -> i64;
    /// Whether the value is nonzero.
    fn to_bool(self) -> bool;
    /// `v` converted with torch's casting rules.
    fn from_f64(v: f64) -> Self;
    /// `v` converted with torch's casting rules.
    fn from_i64(v: i64) -> Self;
    /// 1 for true, 0 for false.
    fn from_bool(v: bool) -> Self;
    /// The additive identity.
    fn zero() -> Self;
    /// The multiplicative identity.
    fn one() -> Self;
    /// The value as a complex number (a real one has no imaginary part).
    #[inline(always)]
    fn to_complex(self) -> Complex<f64> {
        Complex::new(self.to_f64(), 0.0)
    }
    /// From a complex number; a real type keeps the real part.
    #[inline(always)]
    fn from_complex(v: Complex<f64>) -> Self {
        Self::from_f64(v.re)
    }
    /// Converts from any other element type with torch's cast semantics.
    #[inline(always)]
    fn cast_from<U: Element>(v: U) -> Self {
        match U::DTYPE.category() {
            Category::Bool => Self::from_bool(v.to_bool()),
            Category::Integer => Self::from_i64(v.to_i64()),
            Category::Floating => Self::from_f64(v.to_f64()),
            Category::Complex => Self::from_complex(v.to_complex()),
        }
    }
}

/// The element types with an order: every one but the complex types.
pub trait RealElement: Element + PartialOrd {}
impl RealElement for bool {}
impl RealElement for u8 {}
impl RealElement for i8 {}
impl RealElement for i16 {}
impl RealElement for i32 {}
impl RealElement for i64 {}
impl RealElement for half::f16 {}
impl RealElement for half::bf16 {}
impl RealElement for f32 {}
impl RealElement for f64 {}

/// The complex types: a real and an imaginary float of the same width.
/// Conversions from real values set the imaginary part to zero; to real
/// values drop it; to bool test both parts.
macro_rules! impl_complex_element {
    ($f:ty, $dt:expr) => {
        impl Element for Complex<$f> {
            const DTYPE: DType = $dt;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.re as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self.re as i64
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self.re != 0.0 || self.im != 0.0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                Complex::new(v as $f, 0.0)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                Complex::new(v as $f, 0.0)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                Complex::new(v as u8 as $f, 0.0)
            }
            #[inline(always)]
            fn zero() -> Self {
                Complex::new(0.0, 0.0)
            }
            #[inline(always)]
            fn one() -> Self {
                Complex::new(1.0, 0.0)
            }
            #[inline(always)]
            fn to_complex(self) -> Complex<f64> {
                Complex::new(self.re as f64, self.im as f64)
            }
            #[inline(always)]
            fn from_complex(v: Complex<f64>) -> Self {
                Complex::new(v.re as $f, v.im as $f)
            }
        }
    };
}

impl_complex_element!(f32, DType::Complex64);
impl_complex_element!(f64, DType::Complex128);

/// Elements that cast to and from `f64`/`i64` with `as`. The narrow
/// integers (`via i64`) take floats through int64 first, so that they
/// truncate toward zero into int64 and then wrap, as torch's do for values
/// within int64's range (`-1.7` becomes 255 as uint8).
macro_rules! impl_numeric_element {
    ($t:ty, $dt:expr $(, via $w:ty)?) => {
        impl Element for $t {
            const DTYPE: DType = $dt;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self != (0 as $t)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v $(as $w)? as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                v as u8 as $t
            }
            #[inline(always)]
            fn zero() -> Self {
                0 as $t
            }
            #[inline(always)]
            fn one() -> Self {
                1 as $t
            }
        }
    };
}

impl_numeric_element!(f32, DType::Float32);
impl_numeric_element!(f64, DType::Float64);
impl_numeric_element!(i32, DType::Int32);
impl_numeric_element!(i64, DType::Int64);
impl_numeric_element!(u8, DType::UInt8, via i64);
impl_numeric_element!(i8, DType::Int8, via i64);
impl_numeric_element!(i16, DType::Int16, via i64);

/// The 16-bit floats. Every conversion into them goes through float32 and
/// rounds to nearest-even from there, as torch converts (so a float64 or
/// int64 value is rounded twice, first to float32).
macro_rules! impl_half_element {
    ($t:ty, $dt:expr) => {
        impl Element for $t {
            const DTYPE: DType = $dt;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.to_f32_const() as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self.to_f32_const() as i64
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self.to_f32_const() != 0.0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t>::from_f32_const(v as f32)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                <$t>::from_f32_const(v as f32)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                if v {
                    <$t>::ONE
                } else {
                    <$t>::ZERO
                }
            }
            #[inline(always)]
            fn zero() -> Self {
                <$t>::ZERO
            }
            #[inline(always)]
            fn one() -> Self {
                <$t>::ONE
            }
        }
    };
}

impl_half_element!(half::f16, DType::Float16);
impl_half_element!(half::bf16, DType::BFloat16);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        v
    }
    #[inline(always)]
    fn from_complex(v: Complex<f64>) -> Self {
        v.re != 0.0 || v.im != 0.0
    }
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
}

/// Floating element types: the ones with transcendental functions.
pub trait Float: RealElement + std::ops::Neg<Output = Self> + num_like::FloatOps {}
impl Float for f32 {}
impl Float for f64 {}
impl Float for half::f16 {}
impl Float for half::bf16 {}

/// Minimal float operations shared by f32 and f64, so kernels can be generic.
pub mod num_like {
    pub trait FloatOps:
        Copy
        + std::ops::Add<Output = Self>
        + std::ops::Sub<Output = Self>
        + std::ops::Mul<Output = Self>
        + std::ops::Div<Output = Self>
    {
        fn sqrt(self) -> Self;
        fn exp(self) -> Self;
        fn ln(self) -> Self;
        fn abs(self) -> Self;
        fn is_nan(self) -> bool;
        fn trunc(self) -> Self;
        fn atan2(self, x: Self) -> Self;
        fn infinity() -> Self;
        fn neg_infinity() -> Self;
        fn nan() -> Self;
    }
    /// `FloatOps` for `$t`: the unary functions `$f` and `atan2` run as
    /// `$wide` (the type itself, or float32 for the 16-bit floats, which
    /// compute there and round once).
    macro_rules! impl_float_ops {
        ($t:ty, $wide:ty, $to:path, $from:path) => {
            impl FloatOps for $t {
                impl_float_ops!(@unary $t, $to, $from; sqrt exp ln abs trunc);
                #[inline(always)]
                fn is_nan(self) -> bool {
                    <$t>::is_nan(self)
                }
                #[inline(always)]
                fn atan2(self, x: Self) -> Self {
                    $from(<$wide>::atan2($to(self), $to(x)))
                }
                fn infinity() -> Self {
                    <$t>::INFINITY
                }
                fn neg_infinity() -> Self {
                    <$t>::NEG_INFINITY
                }
                fn nan() -> Self {
                    <$t>::NAN
                }
            }
        };
        (@unary $t:ty, $to:path, $from:path; $($f:ident)*) => {$(
            #[inline(always)]
            fn $f(self) -> Self {
                $from($to(self).$f())
            }
        )*};
    }

    #[inline(always)]
    fn same<T>(x: T) -> T {
        x
    }

    impl_float_ops!(f32, f32, same, same);
    impl_float_ops!(f64, f64, same, same);
    impl_float_ops!(
        half::f16,
        f32,
        half::f16::to_f32_const,
        half::f16::from_f32_const
    );
    impl_float_ops!(
        half::bf16,
        f32,
        half::bf16::to_f32_const,
        half::bf16::from_f32_const
    );
}
