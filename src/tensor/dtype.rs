//! Element types, their Rust representations and torch's type promotion.
//!
//! [`DType`] lists the dtypes ferrograd stores; [`Element`] ties each
//! to its Rust type so kernels are written once, generically, and
//! [`crate::dispatch`] picks the instantiation at run time. Promotion follows
//! torch: categories bool < integer < floating < complex, and within an
//! operation tensors with dimensions outrank zero-dim tensors, which outrank
//! Python scalars ("wrapped numbers"), unless a lower tier is of a higher
//! category.

use std::fmt;

pub use num_complex::Complex;

/// torch's `complex64` (`ComplexFloat`): two float32s, real part first.
pub type ComplexFloat = Complex<f32>;
/// torch's `complex128` (`ComplexDouble`): two float64s, real part first.
pub type ComplexDouble = Complex<f64>;

/// The element type of a tensor.
///
/// The declaration order is the order torch lists its scalar types in
/// (`uint8, int8, int16, int32, int64, float16, float32, float64,
/// complex64, complex128, bool, bfloat16`), regrouped by category;
/// promotion does not rely on it (see [`DType::promote`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`: true or false (one byte).
    Bool,
    /// `uint8`: unsigned 8-bit integer.
    UInt8,
    /// `int8`: signed 8-bit integer.
    Int8,
    /// `int16`: signed 16-bit integer.
    Int16,
    /// `int32`: signed 32-bit integer.
    Int32,
    /// `int64`: signed 64-bit integer (torch's `long`).
    Int64,
    /// `float16`: IEEE half precision ([`f16`](crate::f16)).
    Float16,
    /// `bfloat16`: brain float, float32's exponent with 8 bits of mantissa
    /// ([`bf16`](crate::bf16)).
    BFloat16,
    /// `float32`: IEEE single precision (torch's default dtype).
    Float32,
    /// `float64`: IEEE double precision.
    Float64,
    /// `complex64`: a pair of float32s.
    Complex64,
    /// `complex128`: a pair of float64s.
    Complex128,
}

/// The broad kind of a dtype, ordered as torch promotes across kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    /// The `bool` dtype.
    Bool,
    /// Signed and unsigned integers.
    Integer,
    /// Real floating-point dtypes.
    Floating,
    /// Complex dtypes.
    Complex,
}

impl DType {
    /// Every dtype ferrograd supports.
    pub const ALL: [DType; 12] = [
        DType::Bool,
        DType::UInt8,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
        DType::Complex128,
    ];

    /// Size of one element in bytes.
    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::UInt8 | DType::Int8 => 1,
            DType::Int16 | DType::Float16 | DType::BFloat16 => 2,
            DType::Int32 | DType::Float32 => 4,
            DType::Int64 | DType::Float64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// torch's name without the module prefix (`float32`, `int64`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "uint8",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// torch's ScalarType name used in its messages (`Float`, `Long`, ...).
    pub fn scalar_type_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::UInt8 => "Byte",
            DType::Int8 => "Char",
            DType::Int16 => "Short",
            DType::Int32 => "Int",
            DType::Int64 => "Long",
            DType::Float16 => "Half",
            DType::BFloat16 => "BFloat16",
            DType::Float32 => "Float",
            DType::Float64 => "Double",
            DType::Complex64 => "ComplexFloat",
            DType::Complex128 => "ComplexDouble",
        }
    }

    /// torch's C++ type name, as its product errors and the profiler's
    /// `Input type` column print it (`float`, `long int`, `c10::Half`).
    pub fn c_type_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "unsigned char",
            DType::Int8 => "signed char",
            DType::Int16 => "short int",
            DType::Int32 => "int",
            DType::Int64 => "long int",
            DType::Float16 => "c10::Half",
            DType::BFloat16 => "c10::BFloat16",
            DType::Float32 => "float",
            DType::Float64 => "double",
            DType::Complex64 => "c10::complex<float>",
            DType::Complex128 => "c10::complex<double>",
        }
    }

    /// Parses torch's names and aliases (`float`, `double`, `half`, `long`,
    /// `int`, `short`, `cfloat`, `cdouble`).
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "uint8" => DType::UInt8,
            "int8" => DType::Int8,
            "int16" | "short" => DType::Int16,
            "int32" | "int" => DType::Int32,
            "int64" | "long" => DType::Int64,
            "float16" | "half" => DType::Float16,
            "bfloat16" => DType::BFloat16,
            "float32" | "float" => DType::Float32,
            "float64" | "double" => DType::Float64,
            "complex64" | "cfloat" => DType::Complex64,
            "complex128" | "cdouble" => DType::Complex128,
            _ => return None,
        })
    }

    /// The broad kind of this dtype.
    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::UInt8 | DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 => {
                Category::Integer
            }
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64 => {
                Category::Floating
            }
            DType::Complex64 | DType::Complex128 => Category::Complex,
        }
    }

    /// Whether this is a real floating-point dtype.
    pub fn is_floating_point(self) -> bool {
        self.category() == Category::Floating
    }

    /// Whether this is a complex dtype.
    pub fn is_complex(self) -> bool {
        self.category() == Category::Complex
    }

    /// Floating or complex: the dtypes that can require gradients.
    pub fn is_differentiable(self) -> bool {
        self.category() >= Category::Floating
    }

    /// The real dtype of one component of a complex dtype (`complex64`
    /// gives `float32`); other dtypes are returned unchanged.
    pub fn to_real(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            other => other,
        }
    }

    /// The complex dtype whose components are this floating dtype, as
    /// torch's `toComplexType`: float64 gives `complex128`, the other
    /// floats `complex64` (torch's 16-bit complex type is not provided).
    /// Complex dtypes are returned unchanged; integers and bool give the
    /// default complex dtype.
    pub fn to_complex(self) -> DType {
        match self {
            DType::Float64 | DType::Complex128 => DType::Complex128,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Complex64 => {
                DType::Complex64
            }
            _ => default_complex_dtype(),
        }
    }

    /// Whether the dtype holds negative values (`bool` and `uint8` do not).
    pub fn is_signed(self) -> bool {
        !matches!(self, DType::Bool | DType::UInt8)
    }

    /// The 16-bit floats, which store few bits and compute in float32: each
    /// op widens its inputs, computes in float32 and rounds its result once.
    pub fn is_reduced_float(self) -> bool {
        matches!(self, DType::Float16 | DType::BFloat16)
    }

    /// The dtype an op computes in for this one: float32 for the 16-bit
    /// floats, the dtype itself otherwise.
    pub fn compute_dtype(self) -> DType {
        if self.is_reduced_float() {
            DType::Float32
        } else {
            self
        }
    }

    /// The NumPy `__array_interface__` type string (little-endian). NumPy
    /// has no bfloat16: it has none.
    pub fn numpy_typestr(self) -> Option<&'static str> {
        Some(match self {
            DType::Bool => "|b1",
            DType::UInt8 => "|u1",
            DType::Int8 => "|i1",
            DType::Int16 => "<i2",
            DType::Int32 => "<i4",
            DType::Int64 => "<i8",
            DType::Float16 => "<f2",
            DType::BFloat16 => return None,
            DType::Float32 => "<f4",
            DType::Float64 => "<f8",
            DType::Complex64 => "<c8",
            DType::Complex128 => "<c16",
        })
    }

    /// Inverse of [`DType::numpy_typestr`]; accepts native-order strings.
    pub fn from_numpy_typestr(s: &str) -> Option<DType> {
        let s = s.strip_prefix(['<', '=', '|']).unwrap_or(s);
        Some(match s {
            "b1" => DType::Bool,
            "u1" => DType::UInt8,
            "i1" => DType::Int8,
            "i2" => DType::Int16,
            "i4" => DType::Int32,
            "i8" => DType::Int64,
            "f2" => DType::Float16,
            "f4" => DType::Float32,
            "f8" => DType::Float64,
            "c8" => DType::Complex64,
            "c16" => DType::Complex128,
            _ => return None,
        })
    }

    /// Bits of an integer dtype (bool counts as 1, floats as 0).
    fn int_bits(self) -> u32 {
        match self {
            DType::Bool => 1,
            DType::UInt8 | DType::Int8 => 8,
            DType::Int16 => 16,
            DType::Int32 => 32,
            DType::Int64 => 64,
            _ => 0,
        }
    }

    /// torch's `promote_types`: the smallest dtype that holds both.
    ///
    /// Across categories the higher one wins (bool < integer < floating).
    /// Two integers give the wider; `uint8` with `int8` gives `int16`, the
    /// narrowest type holding both ranges. Two floats give the wider;
    /// `float16` with `bfloat16` gives `float32`, since neither holds the
    /// other. A complex dtype with a float gives the complex dtype whose
    /// components hold both (`complex64` with `float64` is `complex128`).
    pub fn promote(self, other: DType) -> DType {
        use DType::*;
        if self == other {
            return self;
        }
        let (a, b) = (self.category(), other.category());
        if a != b && a.max(b) != Category::Complex {
            return if a > b { self } else { other };
        }
        match a.max(b) {
            Category::Bool => Bool,
            Category::Integer => match (self, other) {
                (UInt8, Int8) | (Int8, UInt8) => Int16,
                _ if self.int_bits() >= other.int_bits() => self,
                _ => other,
            },
            Category::Floating => match (self, other) {
                (Float16, BFloat16) | (BFloat16, Float16) => Float32,
                _ if self.itemsize() >= other.itemsize() => self,
                _ => other,
            },
            // At least one is complex: promote the components.
            Category::Complex => self.to_real().promote(other.to_real()).to_complex(),
        }
    }

    /// The dtype that ops which always produce floats (sqrt, div, mean...)
    /// compute in for this input: itself if floating or complex, else the
    /// default.
    pub fn to_float(self, default: DType) -> DType {
        if self.is_differentiable() {
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

/// The floating dtypes [`set_default_dtype`] accepts, by their stored code.
const DEFAULT_CHOICES: [DType; 4] = [
    DType::Float32,
    DType::Float64,
    DType::Float16,
    DType::BFloat16,
];

/// The dtype that Python floats and float-producing creation functions use
/// (`float32` unless changed with [`set_default_dtype`]).
pub fn default_dtype() -> DType {
    let code = DEFAULT_DTYPE.load(std::sync::atomic::Ordering::Relaxed);
    DEFAULT_CHOICES[code as usize % DEFAULT_CHOICES.len()]
}

/// The dtype Python complex numbers use: `complex128` when the default
/// dtype is float64, `complex64` otherwise.
pub fn default_complex_dtype() -> DType {
    if default_dtype() == DType::Float64 {
        DType::Complex128
    } else {
        DType::Complex64
    }
}

/// Sets the default floating dtype; only floating dtypes are allowed.
pub fn set_default_dtype(dtype: DType) -> crate::Result<()> {
    let Some(code) = DEFAULT_CHOICES.iter().position(|&d| d == dtype) else {
        return Err(crate::Error::type_error(format!(
            "only floating-point types are supported as the default type, got {dtype}"
        )));
    };
    DEFAULT_DTYPE.store(code as u8, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// One participant in type promotion: its dtype, and its priority tier.
#[derive(Debug, Clone, Copy)]
pub struct PromotionOperand {
    /// The operand's dtype.
    pub dtype: DType,
    /// How strongly it takes part: tensors of one or more dims, zero-dim
    /// tensors, or Rust/Python numbers.
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
                // A Python float participates as the default dtype, a Python
                // complex as the default complex dtype, a Python int as int64.
                (Tier::Wrapped, Category::Floating) => default_dtype(),
                (Tier::Wrapped, Category::Complex) => default_complex_dtype(),
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
        // A complex higher tier always wins. A complex lower tier makes a
        // floating higher tier complex at its own precision, and replaces
        // any other. A floating higher tier otherwise wins; a bool higher
        // tier, or a floating lower tier, promotes; an integer higher tier
        // keeps its width against lower-tier integers.
        (Some(h), Some(l)) => Some(if h.is_complex() {
            h
        } else if l.is_complex() {
            if h.is_floating_point() {
                h.to_complex()
            } else {
                l
            }
        } else if h.is_floating_point() {
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

/// The narrow integers: conversions from floats truncate toward zero into
/// int64 and then wrap, as torch's do for values within int64's range
/// (`-1.7` becomes 255 as uint8).
macro_rules! impl_narrow_int_element {
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
                self != 0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as i64 as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                v as $t
            }
            #[inline(always)]
            fn zero() -> Self {
                0
            }
            #[inline(always)]
            fn one() -> Self {
                1
            }
        }
    };
}

impl_narrow_int_element!(u8, DType::UInt8);
impl_narrow_int_element!(i8, DType::Int8);
impl_narrow_int_element!(i16, DType::Int16);

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
                #[inline(always)]
                fn trunc(self) -> Self {
                    <$t>::trunc(self)
                }
                #[inline(always)]
                fn atan2(self, x: Self) -> Self {
                    <$t>::atan2(self, x)
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

    /// The 16-bit floats compute in float32 and round once.
    macro_rules! impl_half_ops {
        ($t:ty) => {
            impl FloatOps for $t {
                #[inline(always)]
                fn sqrt(self) -> Self {
                    <$t>::from_f32_const(self.to_f32_const().sqrt())
                }
                #[inline(always)]
                fn exp(self) -> Self {
                    <$t>::from_f32_const(self.to_f32_const().exp())
                }
                #[inline(always)]
                fn ln(self) -> Self {
                    <$t>::from_f32_const(self.to_f32_const().ln())
                }
                #[inline(always)]
                fn abs(self) -> Self {
                    <$t>::from_f32_const(self.to_f32_const().abs())
                }
                #[inline(always)]
                fn is_nan(self) -> bool {
                    <$t>::is_nan(self)
                }
                #[inline(always)]
                fn trunc(self) -> Self {
                    <$t>::from_f32_const(self.to_f32_const().trunc())
                }
                #[inline(always)]
                fn atan2(self, x: Self) -> Self {
                    <$t>::from_f32_const(self.to_f32_const().atan2(x.to_f32_const()))
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
    impl_half_ops!(half::f16);
    impl_half_ops!(half::bf16);
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
            $crate::DType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::DType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DType::Int16 => {
                type $T = i16;
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
            $crate::DType::Float16 => {
                type $T = $crate::f16;
                $body
            }
            $crate::DType::BFloat16 => {
                type $T = $crate::bf16;
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
            $crate::DType::Complex64 => {
                type $T = $crate::ComplexFloat;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = $crate::ComplexDouble;
                $body
            }
        }
    };
}

/// Like [`dispatch!`] but for the ordered (non-complex) dtypes, binding
/// types that implement [`RealElement`]; complex dtypes run `$else`.
#[macro_export]
macro_rules! dispatch_real {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::Complex64 | $crate::DType::Complex128 => $other,
            dt => $crate::dispatch_numeric!(dt, $T => $body, else unreachable!()),
        }
    };
}

/// Like [`dispatch!`] but for the dtypes with arithmetic (every one but
/// bool, complex included); bool runs `$else`.
#[macro_export]
macro_rules! dispatch_arith {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::Complex64 => {
                type $T = $crate::ComplexFloat;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = $crate::ComplexDouble;
                $body
            }
            dt => $crate::dispatch_numeric!(dt, $T => $body, else $other),
        }
    };
}

/// Like [`dispatch!`] but only for the complex dtypes; others run `$else`.
#[macro_export]
macro_rules! dispatch_complex {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::Complex64 => {
                type $T = $crate::ComplexFloat;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = $crate::ComplexDouble;
                $body
            }
            _ => $other,
        }
    };
}

/// Like [`dispatch!`] but only for floating dtypes; others run `$else`.
#[macro_export]
macro_rules! dispatch_float {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::Float16 => {
                type $T = $crate::f16;
                $body
            }
            $crate::DType::BFloat16 => {
                type $T = $crate::bf16;
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

/// Like [`dispatch!`] but for numeric (non-bool) dtypes; bool runs `$else`.
#[macro_export]
macro_rules! dispatch_numeric {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::DType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DType::Int16 => {
                type $T = i16;
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
            $crate::DType::Float16 => {
                type $T = $crate::f16;
                $body
            }
            $crate::DType::BFloat16 => {
                type $T = $crate::bf16;
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

impl crate::error::ScalarTypeName for DType {
    fn scalar_type_name(&self) -> &'static str {
        DType::scalar_type_name(*self)
    }
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
