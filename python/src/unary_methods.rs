//! The pointwise unary methods of `Tensor` (`sqrt`, `exp`, `sin`, ...)
//! and their in-place `_` forms, each calling the core op of its name.
//!
//! The methods of the core's unary derivative tables are generated from the
//! tables' rows (`ferrograd::float_unary_rows!`, `ferrograd::num_unary_rows!`):
//! a row's one-line doc becomes the method's docstring and its aliases
//! become methods too. `_core._unary_rows()` lists the rows, for the Python
//! modules that make the module-level functions and for the test that
//! checks every row is reachable everywhere.

use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::Tensor;
use pyo3::prelude::*;

/// `f(t)` as a method result (without the GIL for large tensors).
fn call(
    py: Python<'_>,
    t: &Tensor,
    f: fn(&Tensor) -> ferrograd::Result<Tensor>,
) -> PyResult<TensorOut> {
    Ok(nogil(py, t.numel(), || f(t)).py()?.into())
}

/// The in-place `f(t)` as a method result: the tensor itself.
fn call_<'py>(
    slf: &Bound<'py, PyTensor>,
    f: fn(&Tensor) -> ferrograd::Result<()>,
) -> PyResult<Bound<'py, PyTensor>> {
    let t = &slf.get().tensor();
    nogil(slf.py(), t.numel(), || f(t)).py()?;
    Ok(slf.clone())
}

/// The methods `$name()` and `$name_()` calling the core ops of those names,
/// and each alias pair calling them too; `[by_hand]` makes nothing (the
/// binding writes that method elsewhere).
macro_rules! method_pair {
    ([by_hand] $($rest:tt)*) => {};
    ([] $doc:literal $name:ident $name_:ident $(| $alias:ident $alias_:ident)*) => {
        #[pymethods]
        impl PyTensor {
            #[doc = concat!($doc, "\n\nSee :func:`ferrograd.", stringify!($name), "`.")]
            fn $name(&self, py: Python<'_>) -> PyResult<TensorOut> {
                call(py, &self.tensor(), Tensor::$name)
            }

            #[doc = concat!("In-place version of :meth:`Tensor.", stringify!($name), "`.")]
            fn $name_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
                call_(slf, Tensor::$name_)
            }

            $(
                #[doc = concat!("Alias for :meth:`Tensor.", stringify!($name), "`.")]
                fn $alias(&self, py: Python<'_>) -> PyResult<TensorOut> {
                    call(py, &self.tensor(), Tensor::$name)
                }

                #[doc = concat!("In-place version of :meth:`Tensor.", stringify!($alias), "`.")]
                fn $alias_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
                    call_(slf, Tensor::$name_)
                }
            )*
        }
    };
}

/// One row of a unary table, as `_core._unary_rows()` reports it.
struct UnaryRow {
    table: &'static str,
    name: &'static str,
    inplace: &'static str,
    aliases: &'static [&'static str],
    by_hand: bool,
    doc: &'static str,
}

/// Reads the rows of a core unary table (the grammar of
/// `ferrograd::float_unary_rows!`): the method pair of each row, and the
/// table's rows as the constant `$table`.
macro_rules! row_methods {
    ($table:ident($family:literal);
     $($(#[binding($how:ident)])? $doc:literal $name:ident $name_:ident $(| $alias:ident $alias_:ident)*
       => $kernel:ident, $(bool: $bool:expr,)?
       $node:literal $saved:ident $(, fused $fz:ident)? => |$g:ident, $v:pat_param| $grad:expr;)*) => {
        $(method_pair!([$($how)?] $doc $name $name_ $(| $alias $alias_)*);)*

        const $table: &[UnaryRow] = &[$(UnaryRow {
            table: stringify!($table),
            name: stringify!($name),
            inplace: stringify!($name_),
            aliases: &[$(stringify!($alias)),*],
            by_hand: row_methods!(@by_hand $($how)?),
            doc: $doc,
        },)*];
    };
    (@by_hand by_hand) => { true };
    (@by_hand) => { false };
}

ferrograd::float_unary_rows!(row_methods);
ferrograd::num_unary_rows!(row_methods);

/// A row as Python receives it: `(table, name, inplace, aliases, by_hand, doc)`.
type RowTuple = (
    &'static str,
    &'static str,
    &'static str,
    Vec<&'static str>,
    bool,
    &'static str,
);

/// The rows of the core's unary tables, each as ``(table, name, inplace,
/// aliases, by_hand, doc)``: ``by_hand`` rows have methods written by hand
/// (with other parameters); the others' methods come from the rows.
#[pyfunction]
pub fn _unary_rows() -> Vec<RowTuple> {
    FORMULAS_FLOAT
        .iter()
        .chain(FORMULAS_NUM)
        .map(|r| {
            (
                r.table,
                r.name,
                r.inplace,
                r.aliases.to_vec(),
                r.by_hand,
                r.doc,
            )
        })
        .collect()
}

// Unary methods of ops that are not rows of those tables.
method_pair!([] "Fractional part of each element, ``x - trunc(x)``." frac frac_);
method_pair!([] "Square of each element, ``x * x``." square square_);
method_pair!([] "Bitwise NOT of each element (logical NOT for bool tensors)." bitwise_not bitwise_not_);
method_pair!(
    [] "Complex conjugate of each element, written to new memory (a real tensor is returned unchanged)."
    conj_physical conj_physical_
);
