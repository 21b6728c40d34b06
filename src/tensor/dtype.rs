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
