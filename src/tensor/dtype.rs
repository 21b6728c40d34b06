//! Element types, their Rust representations and torch's type promotion.
//!
//! [`DType`] lists the dtypes ferrograd stores today; [`Element`] ties each
//! to its Rust type so kernels are written once, generically, and
//! [`crate::dispatch`] picks the instantiation at run time. Promotion follows
//! torch: categories bool < integer < floating, and within an operation
//! tensors with dimensions outrank zero-dim tensors, which outrank Python
//! scalars ("wrapped numbers"), unless a lower tier is of a higher category.

use std::fmt;

/// The element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Int32,
    Int64,
    Float32,
    Float64,
}

/// The broad kind of a dtype, ordered as torch promotes across kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Bool,
    Integer,
    Floating,
}

impl DType {
    /// Every dtype ferrograd supports, in promotion order.
    pub const ALL: [DType; 5] = [
        DType::Bool,
        DType::Int32,
        DType::Int64,
        DType::Float32,
        DType::Float64,
    ];

    /// Size of one element in bytes.
    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::Int32 | DType::Float32 => 4,
            DType::Int64 | DType::Float64 => 8,
        }
    }

    /// torch's name without the module prefix (`float32`, `int64`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
        }
    }

    /// torch's ScalarType name used in its messages (`Float`, `Long`, ...).
    pub fn scalar_type_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::Int32 => "Int",
            DType::Int64 => "Long",
            DType::Float32 => "Float",
            DType::Float64 => "Double",
        }
    }

    /// Parses torch's names and aliases (`float`, `double`, `long`, `int`).
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "int32" | "int" => DType::Int32,
            "int64" | "long" => DType::Int64,
            "float32" | "float" => DType::Float32,
            "float64" | "double" => DType::Float64,
            _ => return None,
        })
    }

    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::Int32 | DType::Int64 => Category::Integer,
            DType::Float32 | DType::Float64 => Category::Floating,
        }
    }

    pub fn is_floating_point(self) -> bool {
        self.category() == Category::Floating
    }

    /// Complex dtypes are not stored yet; kept so callers can ask as in torch.
    pub fn is_complex(self) -> bool {
        false
    }

    pub fn is_signed(self) -> bool {
        !matches!(self, DType::Bool)
    }

    /// The NumPy `__array_interface__` type string (little-endian).
    pub fn numpy_typestr(self) -> &'static str {
        match self {
            DType::Bool => "|b1",
            DType::Int32 => "<i4",
            DType::Int64 => "<i8",
            DType::Float32 => "<f4",
            DType::Float64 => "<f8",
        }
    }

    /// Inverse of [`DType::numpy_typestr`]; accepts native-order strings.
    pub fn from_numpy_typestr(s: &str) -> Option<DType> {
        Some(match s {
            "|b1" | "<b1" | "=b1" => DType::Bool,
            "<i4" | "=i4" => DType::Int32,
            "<i8" | "=i8" => DType::Int64,
            "<f4" | "=f4" => DType::Float32,
            "<f8" | "=f8" => DType::Float64,
            _ => return None,
        })
    }

    /// The larger of two dtypes by torch's promotion lattice.
    pub fn promote(self, other: DType) -> DType {
        // Within this set the declaration order is the lattice order:
        // bool < int32 < int64 < float32 < float64.
        self.max(other)
    }

    /// The dtype that ops which always produce floats (sqrt, div, mean...)
    /// compute in for this input: itself if floating, else the default.
    pub fn to_float(self, default: DType) -> DType {
        if self.is_floating_point() {
            self
        } else {
            default
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

static DEFAULT_DTYPE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The dtype that Python floats and float-producing creation functions use
/// (`float32` unless changed with [`set_default_dtype`]).
pub fn default_dtype() -> DType {
    match DEFAULT_DTYPE.load(std::sync::atomic::Ordering::Relaxed) {
        1 => DType::Float64,
        _ => DType::Float32,
    }
}

/// Sets the default floating dtype; only floating dtypes are allowed.
pub fn set_default_dtype(dtype: DType) -> crate::Result<()> {
    let code = match dtype {
        DType::Float32 => 0,
        DType::Float64 => 1,
        other => {
            return Err(crate::Error::type_error(format!(
                "only floating-point types are supported as the default type, got {other}"
            )))
        }
    };
    DEFAULT_DTYPE.store(code, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// One participant in type promotion: its dtype, and its priority tier.
#[derive(Debug, Clone, Copy)]
pub struct PromotionOperand {
    pub dtype: DType,
    pub tier: Tier,
}

/// Priority tiers of torch's `result_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// A tensor with at least one dimension.
    Dimensioned,
    /// A zero-dim tensor.
    ZeroDim,
    /// A Python scalar (or a tensor made from one).
    Wrapped,
}

/// torch's `result_type` over any number of operands.
///
/// Each tier is promoted on its own; a lower tier only changes the result
/// when it is of a higher category (e.g. `int_tensor * 2.5` is floating, but
/// `float32_tensor * float64_scalar_tensor` stays float32).
pub fn result_type(operands: &[PromotionOperand]) -> DType {
    let fold = |tier: Tier| {
        operands
            .iter()
            .filter(|o| o.tier == tier)
            .map(|o| match (tier, o.dtype.category()) {
                // A Python float participates as the default dtype; a Python
                // int as int64.
                (Tier::Wrapped, Category::Floating) => default_dtype(),
                _ => o.dtype,
            })
            .reduce(DType::promote)
    };
    let dim = fold(Tier::Dimensioned);
    let zero = fold(Tier::ZeroDim);
    let wrapped = fold(Tier::Wrapped);
    combine(dim, combine(zero, wrapped)).unwrap_or_else(default_dtype)
}

/// Combines a higher-priority result with a lower-priority one.
fn combine(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (None, l) => l,
        (h, None) => h,
        // A floating higher tier always wins; otherwise a bool higher tier,
        // or a floating lower tier, promotes; an integer higher tier keeps
        // its width against lower-tier integers.
        (Some(h), Some(l)) => Some(if h.is_floating_point() {
            h
        } else if h == DType::Bool || l.is_floating_point() {
            h.promote(l)
        } else {
            h
        }),
    }
}

/// A Rust type that stores the elements of one [`DType`].
///
/// Conversions go through `f64`/`i64` so generic kernels can cast between
/// any two element types with torch's semantics (float to int truncates
/// toward zero; anything to bool is `!= 0`).
pub trait Element:
    Copy + Send + Sync + PartialOrd + PartialEq + fmt::Debug + Default + 'static
{
    const DTYPE: DType;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn to_bool(self) -> bool;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_bool(v: bool) -> Self;
    fn zero() -> Self;
    fn one() -> Self;
    /// Converts from any other element type with torch's cast semantics.
    #[inline(always)]
    fn cast_from<U: Element>(v: U) -> Self {
        match U::DTYPE.category() {
            Category::Bool => Self::from_bool(v.to_bool()),
            Category::Integer => Self::from_i64(v.to_i64()),
            Category::Floating => Self::from_f64(v.to_f64()),
        }
    }
}

macro_rules! impl_numeric_element {
    ($t:ty, $dt:expr) => {
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
                v as $t
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
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
}

/// Floating element types: the ones with transcendental functions.
pub trait Float: Element + std::ops::Neg<Output = Self> + num_like::FloatOps {}
impl Float for f32 {}
impl Float for f64 {}

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
        fn infinity() -> Self;
        fn neg_infinity() -> Self;
        fn nan() -> Self;
    }
    macro_rules! impl_float_ops {
        ($t:ty) => {
            impl FloatOps for $t {
                #[inline(always)]
                fn sqrt(self) -> Self {
                    <$t>::sqrt(self)
                }
                #[inline(always)]
                fn exp(self) -> Self {
                    <$t>::exp(self)
                }
                #[inline(always)]
                fn ln(self) -> Self {
                    <$t>::ln(self)
                }
                #[inline(always)]
                fn abs(self) -> Self {
                    <$t>::abs(self)
                }
                #[inline(always)]
                fn is_nan(self) -> bool {
                    <$t>::is_nan(self)
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
    }
    impl_float_ops!(f32);
    impl_float_ops!(f64);
}

/// Runs `$body` with `$T` bound to the Rust element type of `$dtype`.
///
/// ```ignore
/// dispatch!(t.dtype(), T => kernel::<T>(t))
/// ```
#[macro_export]
macro_rules! dispatch {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// Like [`dispatch!`] but only for floating dtypes; others run `$else`.
#[macro_export]
macro_rules! dispatch_float {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    };
}

/// Like [`dispatch!`] but for numeric (non-bool) dtypes; bool runs `$else`.
#[macro_export]
macro_rules! dispatch_numeric {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(dtype: DType, tier: Tier) -> PromotionOperand {
        PromotionOperand { dtype, tier }
    }

    #[test]
    fn promotion_follows_torch_tiers() {
        use DType::*;
        use Tier::*;
        // int tensor + python float -> default float
        assert_eq!(
            result_type(&[op(Int64, Dimensioned), op(Float64, Wrapped)]),
            Float32
        );
        // float32 tensor + float64 zero-dim -> float32
        assert_eq!(
            result_type(&[op(Float32, Dimensioned), op(Float64, ZeroDim)]),
            Float32
        );
        // int32 tensor + int64 zero-dim -> int32
        assert_eq!(
            result_type(&[op(Int32, Dimensioned), op(Int64, ZeroDim)]),
            Int32
        );
        // int32 tensor + python int -> int32
        assert_eq!(
            result_type(&[op(Int32, Dimensioned), op(Int64, Wrapped)]),
            Int32
        );
        // bool tensor + python int -> int64
        assert_eq!(
            result_type(&[op(Bool, Dimensioned), op(Int64, Wrapped)]),
            Int64
        );
        // int32 tensor + float64 zero-dim -> float64 (higher category)
        assert_eq!(
            result_type(&[op(Int32, Dimensioned), op(Float64, ZeroDim)]),
            Float64
        );
        // same tier promotes normally
        assert_eq!(
            result_type(&[op(Int32, Dimensioned), op(Float32, Dimensioned)]),
            Float32
        );
        assert_eq!(
            result_type(&[op(Float32, ZeroDim), op(Float64, ZeroDim)]),
            Float64
        );
    }
}
