//! How a recorded operation copies its arguments and gives them back on
//! replay: [`Capturable`], implemented for every argument type of the
//! derivative tables' operations.

use super::{Recording, Source};
use crate::ops::TensorIndex;
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

impl<'a> Capturable<'a> for &'a Tensor {
    type Kept = Source;
    type Owned = Tensor;
    fn keep(&self, rec: &mut Recording) -> Option<Source> {
        rec.source(self)
    }
    fn rebuild(kept: &Source, vals: &[Tensor]) -> Tensor {
        kept.get(vals)
    }
    fn view(owned: &'a Tensor) -> Self {
        owned
    }
}

impl<'a> Capturable<'a> for Tensor {
    type Kept = Source;
    type Owned = Tensor;
    fn keep(&self, rec: &mut Recording) -> Option<Source> {
        rec.source(self)
    }
    fn rebuild(kept: &Source, vals: &[Tensor]) -> Tensor {
        kept.get(vals)
    }
    fn view(owned: &'a Tensor) -> Self {
        owned.clone()
    }
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

impl<'a> Capturable<'a> for &'a [Tensor] {
    type Kept = Vec<Source>;
    type Owned = Vec<Tensor>;
    fn keep(&self, rec: &mut Recording) -> Option<Vec<Source>> {
        self.iter().map(|t| rec.source(t)).collect()
    }
    fn rebuild(kept: &Vec<Source>, vals: &[Tensor]) -> Vec<Tensor> {
        kept.iter().map(|s| s.get(vals)).collect()
    }
    fn view(owned: &'a Vec<Tensor>) -> Self {
        owned
    }
}

/// An index argument with its tensors as sources.
#[derive(Clone)]
pub enum KeptIndex {
    /// An index without tensors, copied.
    Plain(TensorIndex),
    /// A tensor index.
    Tensor(Source),
}

impl<'a> Capturable<'a> for &'a [TensorIndex] {
    type Kept = Vec<KeptIndex>;
    type Owned = Vec<TensorIndex>;
    fn keep(&self, rec: &mut Recording) -> Option<Vec<KeptIndex>> {
        self.iter()
            .map(|i| match i {
                TensorIndex::Tensor(t) => rec.source(t).map(KeptIndex::Tensor),
                other => Some(KeptIndex::Plain(other.clone())),
            })
            .collect()
    }
    fn rebuild(kept: &Vec<KeptIndex>, vals: &[Tensor]) -> Vec<TensorIndex> {
        kept.iter()
            .map(|k| match k {
                KeptIndex::Plain(i) => i.clone(),
                KeptIndex::Tensor(s) => TensorIndex::Tensor(s.get(vals)),
            })
            .collect()
    }
    fn view(owned: &'a Vec<TensorIndex>) -> Self {
        owned
    }
}

/// Copies of plain values: kept as they are.
macro_rules! plain {
    ($($t:ty),* $(,)?) => {$(
        impl<'a> Capturable<'a> for $t {
            type Kept = $t;
            type Owned = $t;
            fn keep(&self, _: &mut Recording) -> Option<$t> {
                Some(self.clone())
            }
            fn rebuild(kept: &$t, _: &[Tensor]) -> $t {
                kept.clone()
            }
            fn view(owned: &'a $t) -> Self {
                owned.clone()
            }
        }
    )*};
}

plain!(
    bool,
    isize,
    usize,
    i64,
    f64,
    Scalar,
    DType,
    Option<DType>,
    Option<isize>,
    [usize; 2],
    crate::Window,
    crate::FftNorm,
    crate::QrMode,
    crate::Reduction,
    crate::ops::RoundingMode,
    Option<crate::ops::RoundingMode>,
    crate::ops::ViewFn,
    Option<usize>,
    crate::tensor::MemoryFormat,
    crate::ops::linalg::GemmBackend,
    String,
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
