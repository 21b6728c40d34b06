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
//!
//! One layout gets a different order: an operand that is transposed
//! against the output (its stride is large along the output's innermost
//! dim and small along the next one, as `a += b.t()`) would be read one
//! cache line per element across whole rows. [`Nest::par_runs`] then walks
//! the two inner dims in square tiles, so each tile's lines of that operand
//! stay in the L1 cache while they are used (runs are tile-wide pieces of
//! the output's rows; the tiles split over the pool).

use smallvec::SmallVec;

/// A coalesced loop nest over `N` operands (operand 0 is the one written).
pub(crate) struct Nest<const N: usize> {
    /// Dims outer to inner: size and the element stride of each operand.
    dims: SmallVec<[(usize, [usize; N]); 6]>,
    /// Whether [`Nest::par_runs`] walks the two inner dims in tiles.
    tiled: bool,
}

/// The edge of a tile (elements), when an operand is transposed against
/// the output: 32 x 32 keeps a tile of both in the L1 cache (a 16-byte
/// element type's tile of one operand is 16 KiB).
const TILE: usize = 32;

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
        let tiled = transposed_operand(&dims);
        Nest { dims, tiled }
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

/// Whether some operand runs across the output's inner dim with a large
/// stride while being contiguous-ish along the next dim, over dims big
/// enough for tiles to pay.
fn transposed_operand<const N: usize>(dims: &[(usize, [usize; N])]) -> bool {
    let nd = dims.len();
    if nd < 2 {
        return false;
    }
    let (nr, sr) = dims[nd - 2];
    let (nc, sc) = dims[nd - 1];
    nr >= TILE && nc >= TILE && (0..N).any(|k| sc[k] >= TILE && sr[k] < sc[k])
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
        if self.tiled {
            self.tiled_runs(n, &body);
        } else {
            super::iter::for_ranges(n, |s, e| self.runs(s, e, &body));
        }
    }

    /// The runs of every element, tile by tile over the two inner dims
    /// (each tile's runs on one worker).
    fn tiled_runs(&self, n: usize, body: &(impl Fn([usize; N], usize) + Sync + Send)) {
        let nd = self.dims.len();
        let (nr, sr) = self.dims[nd - 2];
        let (nc, sc) = self.dims[nd - 1];
        let (tr, tc) = (nr.div_ceil(TILE), nc.div_ceil(TILE));
        let outer: usize = self.dims[..nd - 2].iter().map(|d| d.0).product();
        let units = outer * tr * tc;
        let unit = |u: usize| {
            let (o, t) = (u / (tr * tc), u % (tr * tc));
            let (r0, c0) = ((t / tc) * TILE, (t % tc) * TILE);
            // The outer dims' offsets of outer index `o`.
            let mut off = [0usize; N];
            let mut rem = o;
            for d in (0..nd - 2).rev() {
                let (m, st) = self.dims[d];
                step(&mut off, &st, rem % m);
                rem /= m;
            }
            step(&mut off, &sc, c0);
            step(&mut off, &sr, r0);
            let len = TILE.min(nc - c0);
            for _ in r0..(r0 + TILE).min(nr) {
                body(off, len);
                step(&mut off, &sr, 1);
            }
        };
        let per = (super::iter::CHUNK / (TILE * TILE)).max(1);
        if super::iter::parallel(n) {
            crate::pool::par_for(units.div_ceil(per), 1, &|c| {
                for u in c * per..((c + 1) * per).min(units) {
                    unit(u);
                }
            });
        } else {
            (0..units).for_each(unit);
        }
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

    /// Every (offset of operand 0, offset of operand 1) `par_runs` visits,
    /// sorted (tiles come in no fixed order across workers).
    fn par_visits(n: &Nest<2>, count: usize) -> Vec<(usize, usize)> {
        let st = n.inner_strides();
        let out = std::sync::Mutex::new(Vec::new());
        n.par_runs(count, |off, len| {
            let mut o = out.lock().unwrap();
            for i in 0..len {
                o.push((off[0] + i * st[0], off[1] + i * st[1]));
            }
        });
        let mut v = out.into_inner().unwrap();
        v.sort();
        v
    }

    #[test]
    fn a_transposed_operand_is_walked_in_tiles_visiting_every_element_once() {
        // [3, 70, 45] contiguous output; the second operand is the same
        // shape with its two inner dims transposed (partial tiles on both).
        let (b, r, c) = (3usize, 70usize, 45usize);
        let n = Nest::<2>::new(&[b, r, c], [&[r * c, c, 1], &[r * c, 1, r]]);
        assert!(n.tiled);
        let want: Vec<(usize, usize)> = (0..b * r * c)
            .map(|i| {
                let (k, rest) = (i / (r * c), i % (r * c));
                (i, k * r * c + (rest % c) * r + rest / c)
            })
            .collect();
        assert_eq!(par_visits(&n, b * r * c), want);
        // Large enough to split over the pool: still each element once.
        let (r, c) = (400usize, 200usize);
        assert!(r * c >= crate::pool::PARALLEL_MIN_ELEMS);
        let n = Nest::<2>::new(&[r, c], [&[c, 1], &[1, r]]);
        let got = par_visits(&n, r * c);
        assert_eq!(got.len(), r * c);
        assert!(got
            .iter()
            .enumerate()
            .all(|(i, &(d, s))| d == i && s == (i % c) * r + i / c));
        // Small or already aligned layouts keep the row-major walk.
        assert!(!Nest::<2>::new(&[8, 8], [&[8, 1], &[1, 8]]).tiled);
        assert!(!Nest::<2>::new(&[64, 64], [&[64, 1], &[64, 1]]).tiled);
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
