//! The argument types of recorded operations: how a capture keeps each
//! argument and rebuilds it on replay ([`Capturable`]).

use super::{Recording, Source};
use crate::{DType, Scalar, Tensor};

/// An argument type of a table operation.
///
/// `keep` copies the argument when the operation is recorded (a tensor
/// becomes its [`Source`]; `None` breaks the capture), `rebuild` makes
/// the owned form again on replay from the program's values, and `view`
/// lends it as the argument type.
pub trait Capturable<'a>: Sized {
    /// What the program keeps.
    type Kept: Send + Sync + 'static;
    /// The owned form on replay.
    type Owned;
    /// The copy kept by the program, or `None` when it cannot be kept.
    fn keep(&self, rec: &mut Recording) -> Option<Self::Kept>;
    /// The owned argument, from the program's values `vals`.
    fn rebuild(kept: &Self::Kept, vals: &[Tensor]) -> Self::Owned;
    /// The argument as the operation takes it.
    fn view(owned: &'a Self::Owned) -> Self;
}

/// A tensor argument, borrowed (`&Tensor`) or owned (`Tensor`): kept as
/// its source.
macro_rules! tensor_arg {
    ($($t:ty => |$o:ident| $view:expr;)*) => {$(
        impl<'a> Capturable<'a> for $t {
            type Kept = Source;
            type Owned = Tensor;
            fn keep(&self, rec: &mut Recording) -> Option<Source> {
                rec.source(self)
            }
            fn rebuild(kept: &Source, vals: &[Tensor]) -> Tensor {
                kept.get(vals)
            }
            fn view($o: &'a Tensor) -> Self {
                $view
            }
        }
    )*};
}

tensor_arg! {
    &'a Tensor => |owned| owned;
    Tensor => |owned| owned.clone();
}

impl<'a> Capturable<'a> for Option<&'a Tensor> {
    type Kept = Option<Source>;
    type Owned = Option<Tensor>;
    fn keep(&self, rec: &mut Recording) -> Option<Option<Source>> {
        match self {
            Some(t) => rec.source(t).map(Some),
            None => Some(None),
        }
    }
    fn rebuild(kept: &Option<Source>, vals: &[Tensor]) -> Option<Tensor> {
        kept.as_ref().map(|s| s.get(vals))
    }
    fn view(owned: &'a Option<Tensor>) -> Self {
        owned.as_ref()
    }
}

/// An element of a slice argument that holds tensors: kept as sources.
pub trait TensorsIn: Sized {
    /// What the program keeps of one element.
    type Kept: Send + Sync + 'static;
    /// The element's copy, or `None` when a tensor in it cannot be kept.
    fn keep_in(&self, rec: &mut Recording) -> Option<Self::Kept>;
    /// The element again, from the program's values.
    fn rebuild_in(kept: &Self::Kept, vals: &[Tensor]) -> Self;
}

impl TensorsIn for Tensor {
    type Kept = Source;
    fn keep_in(&self, rec: &mut Recording) -> Option<Source> {
        rec.source(self)
    }
    fn rebuild_in(kept: &Source, vals: &[Tensor]) -> Tensor {
        kept.get(vals)
    }
}

impl<E: TensorsIn> TensorsIn for Option<E> {
    type Kept = Option<E::Kept>;
    fn keep_in(&self, rec: &mut Recording) -> Option<Option<E::Kept>> {
        self.as_ref()
            .map_or(Some(None), |t| t.keep_in(rec).map(Some))
    }
    fn rebuild_in(kept: &Option<E::Kept>, vals: &[Tensor]) -> Option<E> {
        kept.as_ref().map(|k| E::rebuild_in(k, vals))
    }
}

impl<E: TensorsIn> TensorsIn for Vec<E> {
    type Kept = Vec<E::Kept>;
    fn keep_in(&self, rec: &mut Recording) -> Option<Vec<E::Kept>> {
        self.iter().map(|t| t.keep_in(rec)).collect()
    }
    fn rebuild_in(kept: &Vec<E::Kept>, vals: &[Tensor]) -> Vec<E> {
        kept.iter().map(|k| E::rebuild_in(k, vals)).collect()
    }
}

/// Slices of tensors, of optional tensors and of lists of tensors.
impl<'a, E: TensorsIn> Capturable<'a> for &'a [E] {
    type Kept = Vec<E::Kept>;
    type Owned = Vec<E>;
    fn keep(&self, rec: &mut Recording) -> Option<Vec<E::Kept>> {
        self.iter().map(|t| t.keep_in(rec)).collect()
    }
    fn rebuild(kept: &Vec<E::Kept>, vals: &[Tensor]) -> Vec<E> {
        kept.iter().map(|k| E::rebuild_in(k, vals)).collect()
    }
    fn view(owned: &'a Vec<E>) -> Self {
        owned
    }
}

/// Copies of plain values: kept as they are.
macro_rules! capture_plain {
    ($($t:ty),* $(,)?) => {$(
        impl<'a> $crate::compile::Capturable<'a> for $t {
            type Kept = $t;
            type Owned = $t;
            fn keep(&self, _: &mut $crate::compile::Recording) -> Option<$t> {
                Some(self.clone())
            }
            fn rebuild(kept: &$t, _: &[$crate::Tensor]) -> $t {
                kept.clone()
            }
            fn view(owned: &'a $t) -> Self {
                owned.clone()
            }
        }
    )*};
}

pub(crate) use capture_plain;

capture_plain!(
    bool,
    isize,
    usize,
    i64,
    f64,
    Scalar,
    DType,
    Option<DType>,
    Option<isize>,
    Option<usize>,
    Option<bool>,
    [usize; 2],
    String,
    crate::tensor::MemoryFormat,
);

/// Borrowed slices and strings: kept as owned copies.
macro_rules! borrowed {
    ($($t:ty => $o:ty),* $(,)?) => {$(
        impl<'a> Capturable<'a> for &'a $t {
            type Kept = $o;
            type Owned = $o;
            fn keep(&self, _: &mut Recording) -> Option<$o> {
                Some((*self).to_owned())
            }
            fn rebuild(kept: &$o, _: &[Tensor]) -> $o {
                kept.clone()
            }
            fn view(owned: &'a $o) -> Self {
                owned
            }
        }
    )*};
}

borrowed!(
    [isize] => Vec<isize>,
    [usize] => Vec<usize>,
    [i64] => Vec<i64>,
    [bool] => Vec<bool>,
    [Vec<f64>] => Vec<Vec<f64>>,
);

/// Strings are interned: some operations keep a name argument for the
/// life of the process (`&'static str`), and the same few names recur.
impl<'a> Capturable<'a> for &str {
    type Kept = &'static str;
    type Owned = &'static str;
    fn keep(&self, _: &mut Recording) -> Option<&'static str> {
        Some(intern(self))
    }
    fn rebuild(kept: &&'static str, _: &[Tensor]) -> &'static str {
        kept
    }
    fn view(owned: &'a &'static str) -> Self {
        owned
    }
}

fn intern(s: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Option<std::collections::HashSet<&'static str>>> =
        std::sync::Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = names.get_or_insert_with(Default::default);
    if let Some(&n) = names.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(n);
    n
}

impl<'a> Capturable<'a> for Option<&'a [isize]> {
    type Kept = Option<Vec<isize>>;
    type Owned = Option<Vec<isize>>;
    fn keep(&self, _: &mut Recording) -> Option<Option<Vec<isize>>> {
        Some(self.map(|s| s.to_vec()))
    }
    fn rebuild(kept: &Option<Vec<isize>>, _: &[Tensor]) -> Option<Vec<isize>> {
        kept.clone()
    }
    fn view(owned: &'a Option<Vec<isize>>) -> Self {
        owned.as_deref()
    }
}
