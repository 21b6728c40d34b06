//! Strided loop nests: the walk every elementwise kernel takes when some
//! operand is not a plain contiguous run of the output's shape.
//!
//! The output's dims are simplified before the walk: size-1 dims are
//! dropped and neighbours that every operand walks as one dim (the outer
//! stride is the inner stride times the inner size) are merged, so a
//! permuted or broadcast tensor usually leaves a long innermost dim. The
//! walk then hands out *runs*: stretches of that innermost dim, each with
//! every operand's element offset. A kernel loops over a run with slice
//! loops when each operand's inner stride is 1 or 0 (a contiguous run or
//! one broadcast value), and element by element otherwise.
//!
//! A range of the output's row-major indices can start and end anywhere,
//! so work splits over the pool in fixed-size ranges whatever the shape.

use smallvec::SmallVec;

/// A coalesced loop nest over `N` operands (operand 0 is the one written).
pub(crate) struct Nest<const N: usize> {
    /// Dims outer to inner: size and the element stride of each operand.
    dims: SmallVec<[(usize, [usize; N]); 6]>,
}

impl<const N: usize> Nest<N> {
    /// The nest over `shape`, each operand walked with its own strides
    /// (broadcast dims have stride 0). Dims are taken in the order operand
    /// 0's strides decrease (stable), so a permuted destination is still
    /// written in memory order.
    pub(crate) fn new(shape: &[usize], strides: [&[usize]; N]) -> Self {
        let mut order: SmallVec<[usize; 6]> = (0..shape.len()).filter(|&d| shape[d] != 1).collect();
        order.sort_by_key(|&d| std::cmp::Reverse(strides[0][d]));
        let mut dims: SmallVec<[(usize, [usize; N]); 6]> = SmallVec::new();
        for d in order {
            let n = shape[d];
            let s: [usize; N] = std::array::from_fn(|k| strides[k][d]);
            match dims.last_mut() {
                Some(last) if (0..N).all(|k| last.1[k] == s[k] * n) => *last = (last.0 * n, s),
                _ => dims.push((n, s)),
            }
        }
        if dims.is_empty() {
            dims.push((1, [0; N]));
        }
        Nest { dims }
    }

    /// Each operand's stride along the innermost dim.
    pub(crate) fn inner_strides(&self) -> [usize; N] {
        self.dims[self.dims.len() - 1].1
    }

    /// Calls `body(offsets, len)` for each run that covers the row-major
    /// indices `s..e` of the nest, in order: `offsets[k]` is operand `k`'s
    /// element offset of the run's first element, and the run's elements
    /// sit [`Nest::inner_strides`] apart.
    #[inline]
    pub(crate) fn runs(&self, s: usize, e: usize, mut body: impl FnMut([usize; N], usize)) {
        if s >= e {
            return;
        }
        let nd = self.dims.len();
        let inner = self.dims[nd - 1].0;
        let mut idx: SmallVec<[usize; 6]> = SmallVec::from_elem(0, nd);
        let mut off = [0usize; N];
        let mut rem = s;
        for d in (0..nd).rev() {
            let (n, st) = self.dims[d];
            idx[d] = rem % n;
            rem /= n;
            step(&mut off, &st, idx[d]);
        }
        let mut pos = s;
        while pos < e {
            let len = (inner - idx[nd - 1]).min(e - pos);
            body(off, len);
            pos += len;
            if pos >= e {
                break;
            }
            // Advance the odometer by `len` (to the start of the next row).
            idx[nd - 1] += len;
            step(&mut off, &self.dims[nd - 1].1, len);
            let mut d = nd - 1;
            while d > 0 && idx[d] == self.dims[d].0 {
                let (n, st) = self.dims[d];
                for (o, s) in off.iter_mut().zip(st) {
                    *o -= n * s;
                }
                idx[d] = 0;
                d -= 1;
                idx[d] += 1;
                step(&mut off, &self.dims[d].1, 1);
            }
        }
    }
}

/// Moves every operand's offset `n` steps along a dim of strides `st`.
#[inline(always)]
fn step<const N: usize>(off: &mut [usize; N], st: &[usize; N], n: usize) {
    for (o, s) in off.iter_mut().zip(st) {
        *o += n * s;
    }
}

impl<const N: usize> Nest<N> {
    /// [`Nest::runs`] over all `n` elements, split over the pool in fixed
    /// ranges when large (each range's runs are disjoint).
    #[inline]
    pub(crate) fn par_runs(&self, n: usize, body: impl Fn([usize; N], usize) + Sync + Send) {
        super::iter::for_ranges(n, |s, e| self.runs(s, e, &body));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (offset of operand 0, offset of operand 1) a nest visits over
    /// `s..e`, one element at a time.
    fn visits(n: &Nest<2>, s: usize, e: usize) -> Vec<(usize, usize)> {
        let st = n.inner_strides();
        let mut out = Vec::new();
        n.runs(s, e, |off, len| {
            for i in 0..len {
                out.push((off[0] + i * st[0], off[1] + i * st[1]));
            }
        });
        out
    }

    #[test]
    fn merges_dims_every_operand_walks_as_one() {
        // [4, 3, 5] contiguous, the second operand broadcast along dim 1.
        let n = Nest::<2>::new(&[4, 3, 5], [&[15, 5, 1], &[5, 0, 1]]);
        assert_eq!(n.dims.len(), 3);
        let n = Nest::<2>::new(&[4, 3, 5], [&[15, 5, 1], &[15, 5, 1]]);
        assert_eq!(n.dims.as_slice(), &[(60, [1, 1])]);
        // Size-1 dims vanish; a permuted source keeps its inner run.
        let n = Nest::<2>::new(
            &[6, 1, 64, 784],
            [&[50176, 50176, 784, 1], &[784, 1, 4704, 1]],
        );
        assert_eq!(
            n.dims.as_slice(),
            &[(6, [50176, 784]), (64, [784, 4704]), (784, [1, 1])]
        );
    }

    #[test]
    fn any_range_visits_the_row_major_elements_in_order() {
        // A transposed second operand: offsets are easy to state by hand.
        let (r, c) = (5usize, 7usize);
        let n = Nest::<2>::new(&[r, c], [&[c, 1], &[1, r]]);
        let want: Vec<(usize, usize)> = (0..r * c).map(|i| (i, (i % c) * r + i / c)).collect();
        for s in 0..=r * c {
            for e in s..=r * c {
                assert_eq!(visits(&n, s, e), want[s..e].to_vec(), "range {s}..{e}");
            }
        }
    }

    #[test]
    fn a_permuted_destination_is_walked_in_its_memory_order() {
        // Operand 0 is a transposed [3, 4] view of a [4, 3] buffer.
        let n = Nest::<2>::new(&[3, 4], [&[1, 3], &[4, 1]]);
        let got = visits(&n, 0, 12);
        let firsts: Vec<usize> = got.iter().map(|v| v.0).collect();
        assert_eq!(firsts, (0..12).collect::<Vec<_>>());
        // Each destination element is paired with the source element of
        // the same logical index.
        for (d, s) in got {
            let (i, j) = (d % 3, d / 3);
            assert_eq!(s, i * 4 + j);
        }
    }

    #[test]
    fn an_empty_shape_has_no_runs() {
        let n = Nest::<2>::new(&[0, 3], [&[3, 1], &[0, 1]]);
        assert!(visits(&n, 0, 0).is_empty());
    }

    #[test]
    fn a_scalar_shape_is_one_run_of_one() {
        let n = Nest::<2>::new(&[], [&[], &[]]);
        assert_eq!(visits(&n, 0, 1), vec![(0, 0)]);
        let n = Nest::<2>::new(&[1, 1], [&[1, 1], &[0, 0]]);
        assert_eq!(visits(&n, 0, 1), vec![(0, 0)]);
    }
}
