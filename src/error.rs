//! The crate-wide error type.
//!
//! Every fallible public function returns [`Result`]. Variants carry the
//! shapes, dtypes, dims and versions involved so that the message alone says
//! what went wrong. The Python bindings map each variant to the exception
//! type torch raises for the same mistake (see [`ErrorKind`]).

use crate::tensor::DType;

/// Which Python exception a failure corresponds to in torch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// torch raises `RuntimeError` (shape mismatches, bad views, ...).
    Runtime,
    /// torch raises `IndexError` (dims or indices out of range).
    Index,
    /// torch raises `TypeError` (wrong dtype or argument kind).
    Type,
    /// torch raises `ValueError` (bad argument values).
    Value,
    /// torch raises `AssertionError` (a few checks written as asserts).
    Assertion,
    /// torch raises `NotImplementedError` (a subclass of `RuntimeError`):
    /// an op has no kernel for a dtype.
    NotImplemented,
}

/// Everything that can go wrong in ferrograd.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {dim}")]
    BroadcastMismatch { a: usize, b: usize, dim: usize },

    #[error("shape '{shape:?}' is invalid for input of size {numel}")]
    InvalidViewShape { shape: Vec<isize>, numel: usize },

    #[error("view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead. (shape {shape:?}, strides {strides:?}, requested {requested:?})")]
    NonContiguousView {
        shape: Vec<usize>,
        strides: Vec<usize>,
        requested: Vec<usize>,
    },

    #[error("Dimension out of range (expected to be in range of [{min}, {max}], but got {dim})")]
    DimOutOfRange { dim: isize, min: isize, max: isize },

    #[error("index {index} is out of bounds for dimension {dim} with size {size}")]
    IndexOutOfRange { index: i64, dim: usize, size: usize },

    #[error("{op}: expected {expected}, but got {got}")]
    DTypeMismatch {
        op: &'static str,
        expected: String,
        got: DType,
    },

    #[error("{op}: {msg}")]
    Shape { op: &'static str, msg: String },

    #[error("{0}")]
    Runtime(String),

    #[error("{0}")]
    Index(String),

    #[error("{0}")]
    Type(String),

    #[error("{0}")]
    Value(String),

    #[error("{0}")]
    Assertion(String),

    #[error("{0}")]
    NotImplemented(String),

    /// An error raised by user code called from inside ferrograd (a hook,
    /// a custom function), carried through unchanged so the caller gets the
    /// original error back.
    #[error("{msg}")]
    External { msg: String, payload: ExternalError },
}

/// The original error of [`Error::External`] (e.g. a Python exception).
#[derive(Clone)]
pub struct ExternalError(pub std::sync::Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for ExternalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExternalError(..)")
    }
}

impl Error {
    /// The torch exception type for this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::DimOutOfRange { .. } | Error::IndexOutOfRange { .. } | Error::Index(_) => {
                ErrorKind::Index
            }
            Error::Type(_) => ErrorKind::Type,
            Error::Value(_) => ErrorKind::Value,
            Error::Assertion(_) => ErrorKind::Assertion,
            Error::NotImplemented(_) => ErrorKind::NotImplemented,
            Error::DTypeMismatch { .. } => ErrorKind::Runtime,
            _ => ErrorKind::Runtime,
        }
    }

    /// Shorthand for a `RuntimeError` with a formatted message.
    pub fn runtime(msg: impl Into<String>) -> Self {
        Error::Runtime(msg.into())
    }

    /// Shorthand for an `IndexError`.
    pub fn index(msg: impl Into<String>) -> Self {
        Error::Index(msg.into())
    }

    /// Shorthand for a `TypeError`.
    pub fn type_error(msg: impl Into<String>) -> Self {
        Error::Type(msg.into())
    }

    /// torch's `NotImplementedError` for an op without a kernel for
    /// `dtype`: `"op" not implemented for 'ComplexFloat'`.
    pub fn not_implemented(op: &str, dtype: crate::DType) -> Self {
        Error::NotImplemented(format!(
            "\"{op}\" not implemented for '{}'",
            dtype.scalar_type_name()
        ))
    }

    /// A `NotImplementedError` with a message of its own.
    pub fn not_implemented_msg(msg: impl Into<String>) -> Self {
        Error::NotImplemented(msg.into())
    }

    /// Shorthand for a `ValueError`.
    pub fn value(msg: impl Into<String>) -> Self {
        Error::Value(msg.into())
    }
}

/// `Result` with ferrograd's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Returns early with a `RuntimeError` built by `format!`.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::Runtime(format!($($arg)*)))
    };
}
