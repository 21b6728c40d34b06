//! The recorder's clock: raw ticks while recording, nanoseconds after.
//!
//! Where the CPU has an invariant time-stamp counter (x86-64 with the
//! CPUID flag), a tick is one TSC count, read in a few nanoseconds; the
//! counts are converted to nanoseconds since the profiler's epoch when a
//! run stops, from the TSC and the monotonic clock read at the epoch and at
//! the stop. Elsewhere a tick is a nanosecond of the monotonic clock.

use std::sync::OnceLock;
use std::time::Instant;

/// The epoch: the monotonic clock and the tick count at the first run.
static EPOCH: OnceLock<(Instant, u64)> = OnceLock::new();

#[cfg(target_arch = "x86_64")]
fn invariant_tsc() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        use std::arch::x86_64::__cpuid;
        let max_extended = __cpuid(0x8000_0000).eax;
        // Leaf 0x80000007, EDX bit 8: the TSC runs at a constant rate in
        // every power state.
        max_extended >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn invariant_tsc() -> bool {
    false
}

fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: RDTSC has no preconditions.
    return unsafe { std::arch::x86_64::_rdtsc() };
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// The current tick count.
#[inline]
pub(super) fn ticks() -> u64 {
    if invariant_tsc() {
        return tsc();
    }
    let (epoch, _) = EPOCH.get_or_init(|| (Instant::now(), 0));
    epoch.elapsed().as_nanos() as u64
}

/// Fixes the epoch (at the first run's start).
pub(super) fn start() {
    EPOCH.get_or_init(|| {
        let now = Instant::now();
        (now, if invariant_tsc() { tsc() } else { 0 })
    });
}

/// Converts ticks to nanoseconds since the epoch.
pub(super) struct Calibration {
    tick0: u64,
    ns_per_tick: f64,
}

impl Calibration {
    pub(super) fn ns(&self, tick: u64) -> u64 {
        (tick.saturating_sub(self.tick0) as f64 * self.ns_per_tick) as u64
    }
}

/// The conversion measured from the epoch to now.
pub(super) fn calibration() -> Calibration {
    start();
    let &(epoch, tick0) = EPOCH.get().expect("epoch fixed above");
    if !invariant_tsc() {
        return Calibration {
            tick0: 0,
            ns_per_tick: 1.0,
        };
    }
    let elapsed = epoch.elapsed().as_nanos() as f64;
    let ticks = tsc().saturating_sub(tick0) as f64;
    Calibration {
        tick0,
        ns_per_tick: if ticks > 0.0 { elapsed / ticks } else { 1.0 },
    }
}
