//! Scalars: the values Python numbers (and Rust literals) carry into ops.

use super::{Complex, DType};

/// A dynamically typed scalar value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// An integer (a Python `int`).
    Int(i64),
    /// A real number (a Python `float`).
    Float(f64),
    /// A complex number (a Python `complex`).
    Complex(Complex<f64>),
}

impl Scalar {
    /// The dtype a tensor made from this scalar has (float64 for floats,
    /// complex128 for complex numbers; promotion treats a wrapped float as
    /// the default dtype and a wrapped complex as the default complex
    /// dtype).
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::Int64,
            Scalar::Float(_) => DType::Float64,
            Scalar::Complex(_) => DType::Complex128,
        }
    }
    /// The value as `f64` (complex: the real part; bool: 0 or 1).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Complex(z) => z.re,
        }
    }
    /// The value as `i64` (floats truncate toward zero).
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
            Scalar::Complex(z) => z.re as i64,
        }
    }
    /// Whether the value is nonzero.
    pub fn to_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Complex(z) => z.re != 0.0 || z.im != 0.0,
        }
    }
    /// Converts to element type `T` with torch's cast rules.
    pub fn to_elem<T: super::Element>(self) -> T {
        match self {
            Scalar::Bool(b) => T::from_bool(b),
            Scalar::Int(i) => T::from_i64(i),
            Scalar::Float(f) => T::from_f64(f),
            Scalar::Complex(z) => T::from_complex(z),
        }
    }
    /// The value as a complex number (zero imaginary part for reals).
    pub fn to_complex(self) -> Complex<f64> {
        match self {
            Scalar::Complex(z) => z,
            other => Complex::new(other.to_f64(), 0.0),
        }
    }
    /// Whether this is a `Float`.
    pub fn is_floating_point(self) -> bool {
        matches!(self, Scalar::Float(_))
    }
    /// Whether this is a `Complex`.
    pub fn is_complex(self) -> bool {
        matches!(self, Scalar::Complex(_))
    }
}

/// `From` conversions into a [`Scalar`] variant, widening on the way.
macro_rules! scalar_from {
    ($($t:ty => $variant:ident($v:ident) $conv:expr;)*) => {$(
        impl From<$t> for Scalar {
            fn from($v: $t) -> Self {
                Scalar::$variant($conv)
            }
        }
    )*};
}

scalar_from! {
    f64 => Float(v) v;
    f32 => Float(v) v as f64;
    i64 => Int(v) v;
    i32 => Int(v) v as i64;
    bool => Bool(v) v;
    Complex<f64> => Complex(v) v;
}

impl From<Complex<f32>> for Scalar {
    fn from(v: Complex<f32>) -> Self {
        Scalar::Complex(Complex::new(v.re as f64, v.im as f64))
    }
}
