//! Memory formats and the strides of new results.
//!
//! A dense tensor's dims can lie in memory in any order. Two orders have
//! names ([`MemoryFormat`]): row-major ("contiguous") and channels-last
//! (`N, H, W, C` in memory for an `N, C, H, W` tensor; `N, D, H, W, C` for
//! five dims). [`elementwise_strides`] gives an elementwise result the
//! order its inputs share, as torch does, so that a transposed or
//! channels-last input gives a transposed or channels-last result.

use super::layout::{contiguous_strides, Dims, Layout};
use crate::{Error, Result};

/// How a dense tensor's dims are ordered in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryFormat {
    /// Row-major: the last dim varies fastest.
    Contiguous,
    /// `N, C, H, W` stored as `N, H, W, C` (4-D tensors).
    ChannelsLast,
    /// `N, C, D, H, W` stored as `N, D, H, W, C` (5-D tensors).
    ChannelsLast3d,
    /// Keep the source's layout (a dense source's own strides, else the
    /// order [`elementwise_strides`] infers).
    Preserve,
}

impl MemoryFormat {
    /// Torch's name (`torch.channels_last`...).
    pub fn name(self) -> &'static str {
        match self {
            MemoryFormat::Contiguous => "contiguous_format",
            MemoryFormat::ChannelsLast => "channels_last",
            MemoryFormat::ChannelsLast3d => "channels_last_3d",
            MemoryFormat::Preserve => "preserve_format",
        }
    }

    /// The dims from fastest to slowest in memory for a tensor of `ndim`
    /// dims, or None when the format does not apply to that rank.
    fn fastest_first(self, ndim: usize) -> Option<&'static [usize]> {
        match (self, ndim) {
            (MemoryFormat::ChannelsLast, 4) => Some(&[1, 3, 2, 0]),
            (MemoryFormat::ChannelsLast3d, 5) => Some(&[1, 4, 3, 2, 0]),
            _ => None,
        }
    }

    /// The dense strides of this format for `shape` (row-major for
    /// `Contiguous`), or None when the format needs another rank (or is
    /// `Preserve`, which depends on a source).
    pub fn strides(self, shape: &[usize]) -> Option<Dims> {
        if self == MemoryFormat::Contiguous {
            return Some(contiguous_strides(shape));
        }
        let order = self.fastest_first(shape.len())?;
        let mut strides: Dims = smallvec::smallvec![0; shape.len()];
        let mut acc = 1usize;
        for &d in order {
            strides[d] = acc;
            acc = acc.saturating_mul(shape[d].max(1));
        }
        Some(strides)
    }

    /// The dense strides a new tensor made in this format from a source
    /// laid out as `layout` gets: the format's own strides, or for
    /// `Preserve` the source's strides when they are dense and else the
    /// dense order they suggest (as torch's `clone` and `empty_like`).
    /// Torch's error when the format needs another rank.
    pub fn strides_like(self, layout: &Layout) -> Result<Dims> {
        if self == MemoryFormat::Preserve {
            return Ok(if layout.is_non_overlapping_and_dense() {
                layout.strides().into()
            } else {
                elementwise_strides(layout.shape(), &[layout])
            });
        }
        self.strides(layout.shape()).ok_or_else(|| {
            let rank = if self == MemoryFormat::ChannelsLast {
                4
            } else {
                5
            };
            Error::runtime(format!(
                "required rank {rank} tensor to use {} format",
                self.name()
            ))
        })
    }

    /// Whether `layout` is dense in this format (dims of size 1 may have
    /// any stride); `Preserve` is not a layout and answers false.
    pub fn matches(self, layout: &Layout) -> bool {
        match self {
            MemoryFormat::Contiguous => layout.is_contiguous(),
            MemoryFormat::Preserve => false,
            _ => match self.fastest_first(layout.ndim()) {
                None => false,
                Some(order) => {
                    let mut expected = 1usize;
                    for &d in order {
                        let n = layout.shape()[d];
                        if n != 1 {
                            if layout.strides()[d] != expected {
                                return false;
                            }
                            expected *= n;
                        }
                    }
                    true
                }
            },
        }
    }

    /// The format a dense layout suggests: channels-last when its strides
    /// are channels-last and not also row-major, else contiguous.
    pub fn suggested_by(layout: &Layout) -> MemoryFormat {
        for f in [MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d] {
            if f.matches(layout) && !layout.is_contiguous() {
                return f;
            }
        }
        MemoryFormat::Contiguous
    }
}

/// The strides of a new, dense elementwise result of `shape` computed from
/// operands laid out as `operands` (each broadcastable to `shape`): torch's
/// rule. When every operand has `shape` and they share one dense layout
/// (row-major, channels-last, or the same strides), the result has it;
/// otherwise the result's dims are ordered by the operands' strides, the
/// first operand with a preference deciding (broadcast dims express
/// none; equal strides put the smaller dim first), and laid out densely in
/// that order. No operands, or operands with no preference, give
/// row-major strides.
pub fn elementwise_strides(shape: &[usize], operands: &[&Layout]) -> Dims {
    let n = shape.len();
    if n <= 1 || operands.is_empty() {
        return contiguous_strides(shape);
    }
    if operands.iter().all(|l| l.shape() == shape) {
        if operands.iter().all(|l| l.is_contiguous()) {
            return contiguous_strides(shape);
        }
        let cl = MemoryFormat::ChannelsLast;
        if operands.iter().all(|l| cl.matches(l)) {
            return cl.strides(shape).expect("four dims");
        }
        let first = operands[0].strides();
        if operands
            .iter()
            .all(|l| l.is_non_overlapping_and_dense() && l.strides() == first)
        {
            return first.into();
        }
    }
    // Each operand's strides over the result's dims: 0 where it broadcasts
    // (it has no preference there), its own stride elsewhere.
    let strides: Vec<Dims> = operands
        .iter()
        .map(|l| {
            let lead = n - l.ndim();
            (0..n)
                .map(|i| match i.checked_sub(lead) {
                    Some(j) if l.shape()[j] == shape[i] => l.strides()[j],
                    _ => 0,
                })
                .collect()
        })
        .collect();
    // 1 when dim `a` should lie outside (be slower than) dim `b`, -1 when
    // inside, 0 when no operand decides.
    let order = |a: usize, b: usize| -> i8 {
        for st in &strides {
            let (sa, sb) = (st[a], st[b]);
            if sa == 0 || sb == 0 {
                continue;
            }
            if sa != sb {
                return if sa < sb { -1 } else { 1 };
            }
            if shape[a] > shape[b] {
                return 1;
            }
        }
        0
    };
    // Dims from fastest to slowest: start from row-major order and insert
    // each dim past the faster ones it must lie outside of; an undecided
    // comparison leaves it where it is and keeps looking.
    let mut perm: Dims = (0..n).rev().collect();
    for i in 1..n {
        let mut cur = i;
        for j in (0..i).rev() {
            match order(perm[j], perm[cur]) {
                1 => {
                    perm.swap(j, cur);
                    cur = j;
                }
                -1 => break,
                _ => {}
            }
        }
    }
    let mut out: Dims = smallvec::smallvec![0; n];
    let mut acc = 1usize;
    for &d in &perm {
        out[d] = acc;
        acc = acc.saturating_mul(shape[d].max(1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(shape: &[usize], strides: &[usize]) -> Layout {
        Layout::new(shape, strides, 0)
    }

    #[test]
    fn channels_last_strides_and_matching() {
        let s = MemoryFormat::ChannelsLast.strides(&[2, 3, 4, 5]).unwrap();
        assert_eq!(s.as_slice(), &[60, 1, 15, 3]);
        assert!(MemoryFormat::ChannelsLast.matches(&lay(&[2, 3, 4, 5], &s)));
        assert!(!MemoryFormat::ChannelsLast.matches(&Layout::contiguous(&[2, 3, 4, 5])));
        // One channel: both row-major and channels-last.
        assert!(MemoryFormat::ChannelsLast.matches(&Layout::contiguous(&[2, 1, 4, 5])));
        assert_eq!(MemoryFormat::ChannelsLast.strides(&[2, 3]), None);
        let s3 = MemoryFormat::ChannelsLast3d
            .strides(&[2, 3, 4, 5, 6])
            .unwrap();
        assert_eq!(s3.as_slice(), &[360, 1, 90, 18, 3]);
    }

    #[test]
    fn shared_dense_layouts_are_kept() {
        let t = lay(&[4, 6], &[1, 4]);
        assert_eq!(elementwise_strides(&[4, 6], &[&t, &t]).as_slice(), &[1, 4]);
        // A dense permutation with a size-1 dim keeps that dim's stride.
        let z = lay(&[4, 1, 3], &[1, 4, 4]);
        assert_eq!(
            elementwise_strides(&[4, 1, 3], &[&z]).as_slice(),
            &[1, 4, 4]
        );
    }

    #[test]
    fn first_operand_with_a_preference_decides() {
        let t = lay(&[6, 4], &[1, 6]);
        let c = Layout::contiguous(&[6, 4]);
        assert_eq!(elementwise_strides(&[6, 4], &[&t, &c]).as_slice(), &[1, 6]);
        assert_eq!(elementwise_strides(&[6, 4], &[&c, &t]).as_slice(), &[4, 1]);
        // A broadcast operand first has no say.
        let row = Layout::contiguous(&[4]);
        assert_eq!(
            elementwise_strides(&[6, 4], &[&row, &t]).as_slice(),
            &[1, 6]
        );
    }

    #[test]
    fn sparse_inputs_give_dense_results_in_their_order() {
        // A transposed matrix sliced with a step: (3, 4) with strides (2, 6).
        let t = lay(&[3, 4], &[2, 6]);
        assert_eq!(elementwise_strides(&[3, 4], &[&t]).as_slice(), &[1, 3]);
        let s = lay(&[4, 3], &[6, 2]);
        assert_eq!(elementwise_strides(&[4, 3], &[&s]).as_slice(), &[3, 1]);
    }
}
