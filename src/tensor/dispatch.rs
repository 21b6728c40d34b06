//! The dispatch macros: run a generic body with the Rust element type of
//! a run-time [`DType`](crate::DType) (all dtypes, or one category).

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
            dt => $crate::dispatch_arith!(dt, $T => $body, else unreachable!()),
        }
    };
}

/// Like [`dispatch!`] but for the ordered (non-complex) dtypes, binding
/// types that implement [`RealElement`](crate::RealElement); complex
/// dtypes run `$else`.
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
            dt => $crate::dispatch_complex!(dt, $T => $body,
                else $crate::dispatch_numeric!(dt, $T => $body, else $other)),
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
            dt => $crate::dispatch_wide_float!(dt, $T => $body, else $other),
        }
    };
}

/// Like [`dispatch!`] but only for `float32` and `float64`; others run
/// `$else`.
#[macro_export]
macro_rules! dispatch_wide_float {
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

/// Like [`dispatch!`] but only for the integer dtypes; others run `$else`.
#[macro_export]
macro_rules! dispatch_int {
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
            _ => $other,
        }
    };
}

/// Like [`dispatch!`] but for numeric (non-bool, non-complex) dtypes:
/// the integers and the floats; others run `$else`.
#[macro_export]
macro_rules! dispatch_numeric {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            dt => $crate::dispatch_int!(dt, $T => $body,
                else $crate::dispatch_float!(dt, $T => $body, else $other)),
        }
    };
}
