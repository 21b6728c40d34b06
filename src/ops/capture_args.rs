//! [`Capturable`] for the argument types the operations define (index
//! lists, rounding modes, windows...), so their table rows can be
//! recorded by a capture (see `crate::compile`).

use crate::compile::{capture_plain, Capturable, Recording, Source};
use crate::ops::TensorIndex;
use crate::Tensor;

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

capture_plain!(
    super::conv::Window,
    super::FftNorm,
    super::linalg::QrMode,
    super::Reduction,
    super::RoundingMode,
    Option<super::RoundingMode>,
    super::ViewFn,
    super::linalg::GemmBackend,
);

impl<'a> Capturable<'a> for &'a super::fuse::FusedPlan {
    type Kept = super::fuse::FusedPlan;
    type Owned = super::fuse::FusedPlan;
    fn keep(&self, _: &mut Recording) -> Option<Self::Kept> {
        Some((*self).clone())
    }
    fn rebuild(kept: &Self::Kept, _: &[Tensor]) -> Self::Owned {
        kept.clone()
    }
    fn view(owned: &'a Self::Owned) -> Self {
        owned
    }
}
