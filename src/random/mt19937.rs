//! The MT19937 Mersenne Twister (Matsumoto and Nishimura, "Mersenne
//! Twister: a 623-dimensionally equidistributed uniform pseudo-random
//! number generator", ACM TOMACS 8(1), 1998), with the bookkeeping torch's
//! CPU generator uses (`left`, `next`), so a saved state means the same
//! thing in both.
//!
//! The state is 624 words. Each time all of them have been read, the whole
//! array is regenerated at once (the "twist"); every word read is then
//! passed through the tempering transform. Generation is inherently
//! sequential: word `i + 624` depends on words `i`, `i + 1` and `i + 397`.

/// Words of state.
pub const N: usize = 624;
/// The middle distance of the recurrence.
const M: usize = 397;
/// The last row of the twist matrix.
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER: u32 = 0x8000_0000;
const LOWER: u32 = 0x7fff_ffff;

/// An MT19937 stream.
///
/// `left` and `next` follow torch: a draw first decrements `left`, and
/// when it reaches zero regenerates the state (setting `left = 624`,
/// `next = 0`); it then returns word `next` (tempered) and advances
/// `next`. A freshly seeded stream has `left = 1`, `next = 0`, so its
/// first draw regenerates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mt19937 {
    pub(crate) state: [u32; N],
    pub(crate) left: u32,
    pub(crate) next: u32,
}

/// The tempering transform applied to each word read from the state.
#[inline(always)]
fn temper(mut y: u32) -> u32 {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c_5680;
    y ^= (y << 15) & 0xefc6_0000;
    y ^ (y >> 18)
}

/// One step of the recurrence: the new word from the upper bit of `a`, the
/// lower 31 bits of `b`, and the word `m` positions ahead.
#[inline(always)]
fn twist(a: u32, b: u32, m: u32) -> u32 {
    let y = (a & UPPER) | (b & LOWER);
    m ^ (y >> 1) ^ ((y & 1).wrapping_neg() & MATRIX_A)
}

impl Mt19937 {
    /// The stream of a 32-bit seed (Knuth's multiplier 1812433253 spreads
    /// the seed over the 624 words, as in the reference `init_genrand`).
    pub fn new(seed: u32) -> Mt19937 {
        let mut state = [0u32; N];
        state[0] = seed;
        for j in 1..N {
            let prev = state[j - 1];
            state[j] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(j as u32);
        }
        Mt19937 {
            state,
            left: 1,
            next: 0,
        }
    }

    /// Regenerates all 624 words. Written as three loops whose reads never
    /// alias the words written in the same loop at a distance below 227,
    /// so each loop vectorises.
    fn regenerate(&mut self) {
        let s = &mut self.state;
        crate::kernels::isa::dispatch(
            #[inline(always)]
            || {
                for k in 0..N - M {
                    s[k] = twist(s[k], s[k + 1], s[k + M]);
                }
                for k in N - M..N - 1 {
                    s[k] = twist(s[k], s[k + 1], s[k + M - N]);
                }
            },
        );
        s[N - 1] = twist(s[N - 1], s[0], s[M - 1]);
        self.left = N as u32;
        self.next = 0;
    }

    /// The next 32-bit output.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.left -= 1;
        if self.left == 0 {
            self.regenerate();
        }
        let y = self.state[self.next as usize];
        self.next += 1;
        temper(y)
    }

    /// Fills `out` with the next `out.len()` outputs: the same words, and
    /// the same final state, as that many calls of [`Mt19937::next_u32`].
    pub fn fill_u32(&mut self, out: &mut [u32]) {
        let mut out = out;
        while !out.is_empty() {
            // Words that can be read before the next regeneration.
            let ready = (self.left - 1) as usize;
            if ready == 0 {
                self.regenerate();
                // The draw that regenerates leaves `left = 624` after
                // reading word 0; start one above so the count below
                // lands there.
                self.left = N as u32 + 1;
                continue;
            }
            let k = ready.min(out.len());
            let start = self.next as usize;
            let (head, rest) = out.split_at_mut(k);
            let words = &self.state[start..start + k];
            crate::kernels::isa::dispatch(
                #[inline(always)]
                || {
                    for (o, &w) in head.iter_mut().zip(words) {
                        *o = temper(w);
                    }
                },
            );
            self.next += k as u32;
            self.left -= k as u32;
            out = rest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The reference outputs for seed 5489 are checked through the public
    // API in tests/random.rs.

    /// torch's bookkeeping: a fresh stream has `left = 1`; the first draw
    /// regenerates and leaves `left = 624`, `next = 1`; after 624 draws the
    /// next one regenerates again.
    #[test]
    fn left_and_next_follow_torch() {
        let mut mt = Mt19937::new(123);
        assert_eq!((mt.left, mt.next), (1, 0));
        mt.next_u32();
        assert_eq!((mt.left, mt.next), (624, 1));
        for _ in 1..N {
            mt.next_u32();
        }
        assert_eq!((mt.left, mt.next), (1, 624));
        mt.next_u32();
        assert_eq!((mt.left, mt.next), (624, 1));
    }

    #[test]
    fn bulk_fill_matches_single_draws() {
        for skip in [0usize, 1, 622, 623, 624, 625, 1000] {
            for len in [0usize, 1, 5, 623, 624, 625, 2000] {
                let mut a = Mt19937::new(42);
                let mut b = Mt19937::new(42);
                for _ in 0..skip {
                    a.next_u32();
                    b.next_u32();
                }
                let one: Vec<u32> = (0..len).map(|_| a.next_u32()).collect();
                let mut bulk = vec![0; len];
                b.fill_u32(&mut bulk);
                assert_eq!(one, bulk, "skip {skip} len {len}");
                assert_eq!(a, b, "state after skip {skip} len {len}");
            }
        }
    }
}
