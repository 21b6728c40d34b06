//! Seeded random numbers that reproduce torch's CPU generator bit for bit:
//! the generator ([`Generator`], an MT19937 stream seeded as torch seeds
//! it) and the sampling operations built on it (`rand`, `randn`,
//! `randint`, `randperm`, `normal`, `bernoulli`, `multinomial` and the
//! in-place `uniform_`, `normal_`, `random_`, `bernoulli_`,
//! `exponential_`, in `sample.rs`).
//!
//! Note [One stream, torch's order]
//! A generator is one MT19937 stream (`mt19937.rs`) of 32-bit words, plus
//! the seed it started from and a cached normal value. Every sampling call
//! takes the words it needs from the stream in the order torch's CPU
//! kernels take them (one word per float32 uniform, two per float64
//! uniform or 64-bit integer, high word first), under the generator's
//! lock; the words are drawn sequentially, on the calling thread. What
//! is done with the words afterwards (the Box-Muller transform of
//! `normal.rs`, conversion to the output type) runs in parallel in
//! blocks whose result does not depend on how they are split, so the
//! numbers are the same with any number of threads.
//!
//! Seeding: the 624 words of state come from the low 32 bits of the seed
//! by the reference `init_genrand` recurrence; the full 64-bit seed is
//! kept for `initial_seed()`. A new [`Generator`] starts from torch's
//! default seed 67280421310721; the process-wide default generator starts
//! from a fresh seed drawn from the operating system, so unseeded programs
//! differ from run to run, as in torch.

mod gamma;
mod mt19937;
mod normal;
mod sample;

pub use mt19937::Mt19937;

use crate::{Error, Result};
use parking_lot::{Mutex, MutexGuard};
use std::sync::{Arc, LazyLock};

/// The seed of a new [`Generator`] (torch's value).
pub const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// Bytes of a state from [`Generator::get_state`] (torch's
/// `CPUGeneratorImplState`).
pub const STATE_BYTES: usize = 5056;

/// Everything a generator holds; locked by [`Generator::lock`] for the
/// duration of one sampling call.
#[derive(Clone, Debug)]
pub struct GenState {
    seed: u64,
    mt: Mt19937,
    /// The second value of the last Box-Muller pair drawn one at a time.
    next_double_normal: Option<f64>,
    /// torch keeps a float cache too; no CPU kernel fills it, but a state
    /// carries it.
    next_float_normal: Option<f32>,
}

impl GenState {
    fn new(seed: u64) -> GenState {
        GenState {
            seed,
            mt: Mt19937::new(seed as u32),
            next_double_normal: None,
            next_float_normal: None,
        }
    }

    /// The next 32-bit word.
    #[inline]
    pub fn random(&mut self) -> u32 {
        self.mt.next_u32()
    }

    /// 64 bits from the next two words, the first one high.
    #[inline]
    pub fn random64(&mut self) -> u64 {
        let hi = self.mt.next_u32();
        let lo = self.mt.next_u32();
        (u64::from(hi) << 32) | u64::from(lo)
    }

    /// The next `out.len()` words.
    pub fn fill(&mut self, out: &mut [u32]) {
        self.mt.fill_u32(out)
    }

    /// A uniform float32 in `[0, 1)`: the low 24 bits of one word.
    #[inline]
    pub fn uniform_f32(&mut self) -> f32 {
        unit_f32(self.random())
    }

    /// A uniform float64 in `[0, 1)`: the low 53 bits of two words.
    #[inline]
    pub fn uniform_f64(&mut self) -> f64 {
        unit_f64(self.random64())
    }

    /// One normal value by Box-Muller on two float64 uniforms `u1`, `u2`:
    /// `r = sqrt(-2 ln(1 - u2))`, `t = 2 pi u1`; returns `r cos t` and
    /// keeps `r sin t` for the next call (as torch's
    /// `normal_distribution<double>` does). The result is
    /// `z * std + mean` with one rounding.
    pub fn normal_f64(&mut self, mean: f64, std: f64) -> f64 {
        let z = match self.next_double_normal.take() {
            Some(z) => z,
            None => {
                let u1 = self.uniform_f64();
                let u2 = self.uniform_f64();
                let r = (-2.0 * (-u2).ln_1p()).sqrt();
                let (sin, cos) = (2.0 * std::f64::consts::PI * u1).sin_cos();
                self.next_double_normal = Some(r * sin);
                r * cos
            }
        };
        z.mul_add(std, mean)
    }
}

/// The low 24 bits of `w` as a float32 in `[0, 1)`.
#[inline(always)]
pub(crate) fn unit_f32(w: u32) -> f32 {
    (w & 0x00ff_ffff) as f32 * (1.0 / (1u32 << 24) as f32)
}

/// The low 53 bits of `x` as a float64 in `[0, 1)`.
#[inline(always)]
pub(crate) fn unit_f64(x: u64) -> f64 {
    (x & ((1u64 << 53) - 1)) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A source of random numbers: torch's CPU generator (MT19937).
#[derive(Debug)]
pub struct Generator {
    state: Mutex<GenState>,
}

impl Default for Generator {
    fn default() -> Self {
        Generator::new(DEFAULT_SEED)
    }
}

/// A seed nobody chose: 64 bits from the operating system's entropy
/// (through `rand`'s thread generator, which the OS seeds).
pub fn nondeterministic_seed() -> u64 {
    rand::random()
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            state: Mutex::new(GenState::new(seed)),
        }
    }

    /// Exclusive access to the stream for one sampling call.
    pub fn lock(&self) -> MutexGuard<'_, GenState> {
        self.state.lock()
    }

    /// Restarts the stream from `seed` (and forgets a cached normal).
    pub fn manual_seed(&self, seed: u64) {
        *self.state.lock() = GenState::new(seed);
    }

    /// The seed this stream started from.
    pub fn initial_seed(&self) -> u64 {
        self.state.lock().seed
    }

    /// Reseeds non-deterministically and returns the seed.
    pub fn seed(&self) -> u64 {
        let s = nondeterministic_seed();
        self.manual_seed(s);
        s
    }

    /// The state in torch's byte layout (little-endian, [`STATE_BYTES`]
    /// long): the initial seed (u64), `left` (i32), a seeded flag (i32),
    /// `next` (u64), the 624 words (each in a u64), three f64 slots of
    /// which the second is the cached normal, its valid flag (i32, then 4
    /// bytes of padding), the float cache (f32) and its flag (one byte,
    /// then 3 of padding).
    pub fn get_state(&self) -> Vec<u8> {
        let s = self.state.lock();
        let mut out = Vec::with_capacity(STATE_BYTES);
        out.extend_from_slice(&s.seed.to_le_bytes());
        out.extend_from_slice(&(s.mt.left as i32).to_le_bytes());
        out.extend_from_slice(&1i32.to_le_bytes());
        out.extend_from_slice(&u64::from(s.mt.next).to_le_bytes());
        for &w in &s.mt.state {
            out.extend_from_slice(&u64::from(w).to_le_bytes());
        }
        out.extend_from_slice(&0f64.to_le_bytes());
        out.extend_from_slice(&s.next_double_normal.unwrap_or(0.0).to_le_bytes());
        out.extend_from_slice(&0f64.to_le_bytes());
        out.extend_from_slice(&i32::from(s.next_double_normal.is_some()).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&s.next_float_normal.unwrap_or(0.0).to_le_bytes());
        out.push(u8::from(s.next_float_normal.is_some()));
        out.extend_from_slice(&[0; 3]);
        debug_assert_eq!(out.len(), STATE_BYTES);
        out
    }

    /// Restores a state from [`Generator::get_state`] (or torch's
    /// `get_rng_state()`).
    pub fn set_state(&self, bytes: &[u8]) -> Result<()> {
        if bytes.len() != STATE_BYTES {
            return Err(Error::runtime(format!(
                "Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG state size to be {}",
                bytes.len()
            )));
        }
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(b)
        };
        let i32_at = |i: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&bytes[i..i + 4]);
            i32::from_le_bytes(b)
        };
        // A draw reads word `next` once `left` is above 1, so the two
        // must agree: after a regeneration `next + left` is 625, and a
        // freshly seeded stream has `next = 0`, `left = 1`.
        let left = i32_at(8);
        let next = u64_at(16);
        if !(1..=mt19937::N as i32).contains(&left) || next + left as u64 > mt19937::N as u64 + 1 {
            return Err(Error::runtime(format!(
                "invalid RNG state: the position (left = {left}, next = {next}) is not one MT19937 can be in (left in [1, 624], next + left <= 625)"
            )));
        }
        let mut words = [0u32; mt19937::N];
        for (k, w) in words.iter_mut().enumerate() {
            *w = u64_at(24 + 8 * k) as u32;
        }
        let double_valid = i32_at(5040) != 0;
        let normal_y = f64::from_bits(u64_at(5024));
        let float_cache = if bytes[5052] != 0 {
            let mut b = [0u8; 4];
            b.copy_from_slice(&bytes[5048..5052]);
            Some(f32::from_le_bytes(b))
        } else {
            None
        };
        *self.state.lock() = GenState {
            seed: u64_at(0),
            mt: Mt19937 {
                state: words,
                left: left as u32,
                next: next as u32,
            },
            next_double_normal: double_valid.then_some(normal_y),
            next_float_normal: float_cache,
        };
        Ok(())
    }
}

static DEFAULT: LazyLock<Arc<Generator>> =
    LazyLock::new(|| Arc::new(Generator::new(nondeterministic_seed())));

/// The process-wide generator used when no generator is passed.
pub fn default_generator() -> &'static Arc<Generator> {
    &DEFAULT
}

/// Seeds the default generator.
pub fn manual_seed(seed: u64) {
    DEFAULT.manual_seed(seed)
}

/// The seed the default generator started from.
pub fn initial_seed() -> u64 {
    DEFAULT.initial_seed()
}

/// Reseeds the default generator non-deterministically; returns the seed.
pub fn seed() -> u64 {
    DEFAULT.seed()
}

fn gen_or_default(g: Option<&Generator>) -> &Generator {
    g.unwrap_or(&DEFAULT)
}

/// A sampling function's generator argument, as a capture keeps it: the
/// default generator (`None`) is kept, so a replay draws from it in the
/// order eager execution would; a given generator, which a program could
/// not name on its own, breaks the capture.
impl<'a> crate::compile::Capturable<'a> for Option<&'a Generator> {
    type Kept = ();
    type Owned = ();
    fn keep(&self, rec: &mut crate::compile::Recording) -> Option<()> {
        rec.note_effect(); // the draw moves the generator on
        self.is_none().then_some(())
    }
    fn rebuild(_: &(), _: &[crate::Tensor]) {}
    fn view(_: &'a ()) -> Self {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_bytes_round_trip_with_a_cached_normal() {
        let g = Generator::new(7);
        let _ = g.lock().normal_f64(0.0, 1.0);
        let bytes = g.get_state();
        assert_eq!(bytes.len(), STATE_BYTES);
        let h = Generator::new(0);
        h.set_state(&bytes).unwrap();
        assert_eq!(h.initial_seed(), 7);
        assert_eq!(h.lock().normal_f64(0.0, 1.0), g.lock().normal_f64(0.0, 1.0));
        assert_eq!(h.lock().random(), g.lock().random());
        assert!(h.set_state(&bytes[..100]).is_err());
        // A position past the end of the words is refused, not read.
        let mut bad = bytes.clone();
        bad[16..24].copy_from_slice(&624u64.to_le_bytes());
        bad[8..12].copy_from_slice(&600i32.to_le_bytes());
        assert!(h.set_state(&bad).is_err());
        bad[8..12].copy_from_slice(&1i32.to_le_bytes());
        h.set_state(&bad).unwrap();
        h.lock().random(); // regenerates first
    }

    #[test]
    fn words_and_uniforms_follow_torch() {
        let g = Generator::new(5489);
        let mut s = g.lock();
        assert_eq!(s.random(), 3_499_211_612);
        // 581869302 high, 3890346734 low.
        assert_eq!(s.random64(), (581_869_302u64 << 32) | 3_890_346_734);
        assert_eq!(unit_f32(0xffff_ffff), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(unit_f64(u64::MAX), 1.0 - f64::EPSILON / 2.0);
    }
}
