//! The crate-wide error type.
//!
//! Every fallible public function returns [`Result`]. Variants carry the
//! shapes, dtypes, dims and versions involved so that the message alone says
//! what went wrong. The Python bindings map each variant to the exception
//! type torch raises for the same mistake (see [`ErrorKind`]).

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
    /// torch raises `torch.linalg.LinAlgError` (a subclass of
    /// `RuntimeError`): a matrix is singular or not positive definite.
    LinAlg,
}

/// Everything that can go wrong in ferrograd.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// Two shapes do not broadcast: sizes `a` and `b` differ at `dim` and
    /// neither is 1.
    #[error("The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {dim}")]
    BroadcastMismatch {
        /// The size in the first shape.
        a: usize,
        /// The size in the second shape.
        b: usize,
        /// The dim, counted from the front of the broadcast shape.
        dim: usize,
    },

    /// A requested shape (`view`, `reshape`) does not hold `numel`
    /// elements.
    #[error("shape '{shape:?}' is invalid for input of size {numel}")]
    InvalidViewShape {
        /// The requested shape (`-1` for an inferred size).
        shape: Vec<isize>,
        /// The number of elements of the input.
        numel: usize,
    },

    /// `view` asked for a shape the input's strides cannot express
    /// without copying (`reshape` would copy).
    #[error("view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead. (shape {shape:?}, strides {strides:?}, requested {requested:?})")]
    NonContiguousView {
        /// The input's shape.
        shape: Vec<usize>,
        /// The input's strides.
        strides: Vec<usize>,
        /// The shape asked for.
        requested: Vec<usize>,
    },

    /// A dim argument outside `[min, max]`.
    #[error("Dimension out of range (expected to be in range of [{min}, {max}], but got {dim})")]
    DimOutOfRange {
        /// The dim given.
        dim: isize,
        /// The smallest valid dim (negative: counted from the back).
        min: isize,
        /// The largest valid dim.
        max: isize,
    },

    /// An index past the end (or before the start) of a dim.
    #[error("index {index} is out of bounds for dimension {dim} with size {size}")]
    IndexOutOfRange {
        /// The index given.
        index: i64,
        /// The dim indexed.
        dim: usize,
        /// That dim's size.
        size: usize,
    },

    /// An op got shapes it cannot combine.
    #[error("{op}: {msg}")]
    Shape {
        /// The op's name.
        op: &'static str,
        /// What is wrong with the shapes.
        msg: String,
    },

    /// Any other failure (torch's `RuntimeError`), with torch's message.
    #[error("{0}")]
    Runtime(String),

    /// An invalid index expression (torch's `IndexError`).
    #[error("{0}")]
    Index(String),

    /// An argument of the wrong kind (torch's `TypeError`).
    #[error("{0}")]
    Type(String),

    /// An argument with an invalid value (torch's `ValueError`).
    #[error("{0}")]
    Value(String),

    /// A failed check torch writes as an assert (`AssertionError`).
    #[error("{0}")]
    Assertion(String),

    /// An op without a kernel or derivative for its arguments (torch's
    /// `NotImplementedError`).
    #[error("{0}")]
    NotImplemented(String),

    /// A decomposition or solve that failed on its input's values: a
    /// singular matrix, one that is not positive definite (torch's
    /// `LinAlgError`).
    #[error("{0}")]
    LinAlg(String),

    /// An error raised by user code called from inside ferrograd (a hook,
    /// a custom function), carried through unchanged so the caller gets the
    /// original error back.
    #[error("{msg}")]
    External {
        /// The error's message.
        msg: String,
        /// The original error, for the caller to take back.
        payload: ExternalError,
    },
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
            Error::LinAlg(_) => ErrorKind::LinAlg,
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
    pub fn not_implemented(op: &str, dtype: impl ScalarTypeName) -> Self {
        Error::NotImplemented(format!(
            "\"{op}\" not implemented for '{}'",
            dtype.scalar_type_name()
        ))
    }

    /// A `NotImplementedError` with a message of its own.
    pub fn not_implemented_msg(msg: impl Into<String>) -> Self {
        Error::NotImplemented(msg.into())
    }

    /// Shorthand for a `LinAlgError`.
    pub fn linalg(msg: impl Into<String>) -> Self {
        Error::LinAlg(msg.into())
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

/// A dtype as torch names its scalar type in messages (`'ComplexFloat'`).
/// The error layer sits below the tensor layer, so it names dtypes
/// through this trait, which `DType` implements.
pub trait ScalarTypeName {
    /// torch's scalar type name.
    fn scalar_type_name(&self) -> &'static str;
}
