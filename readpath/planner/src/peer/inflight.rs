//! Polars' adaptive in-flight controller (polars-io `cloud/concurrency`: `mod.rs`
//! `ControllerConfig::default` and the control loop, `model.rs`, `regime.rs`), in integer
//! virtual time. Every GET holds `min(len, 8 MiB)` of a byte budget; a control tick every
//! 100 ms from the store's first use recomputes the budget from the GETs completed in the last
//! second: `Init` keeps 32 MiB until a tick sees 5 samples, then `RampUp` (gain 2) on
//! `max(BDP, 32 MiB)`, `Stable` after 3 ticks without 5% bandwidth growth (gain 2), `ProbeUp`
//! (gain 3) for 1 s every 3 s; a tick without a signal idles (`WarmIdle`, budget kept) and
//! after 5 s goes back to `Init`. BDP = high-water bandwidth × min(mean TTFB, 10 × least TTFB).

use std::collections::VecDeque;

#[cfg(test)]
const MIB: u64 = 1 << 20;
/// `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS`'s default (8 MiB; the `target_chunk_size` of
/// `ControllerConfig::default`): the most one GET holds, and the budget's floor.
#[cfg(test)]
const CHUNK_BYTES: u64 = 8 * MIB;
/// `POLARS_INFLIGHT_INIT_BYTE_BUDGET`'s default on up to 32 threads.
#[cfg(test)]
const INIT_BYTE_BUDGET: u64 = 4 * CHUNK_BYTES;

/// `POLARS_INFLIGHT_INIT_BYTE_BUDGET`'s default (`get_init_byte_budget`):
/// `max(ceil(max_threads / 8), 4) × target_chunk_size`; 32 MiB on up to 32 threads at 8 MiB.
pub(crate) fn default_init_bytes(max_threads: u32, chunk_bytes: u64) -> u64 {
    u64::from(max_threads)
        .div_ceil(8)
        .max(4)
        .saturating_mul(chunk_bytes.max(1))
}
const WINDOW_NS: u64 = 1_000_000_000;
const TICK_NS: u64 = 100_000_000;
const MIN_SAMPLES: usize = 5;
const RAMPUP_EXIT_ROUNDS: u32 = 3;
const PROBE_INTERVAL_NS: u64 = 3_000_000_000;
const PROBE_DURATION_NS: u64 = 1_000_000_000;
const WARM_IDLE_GRACE_NS: u64 = 5_000_000_000;

/// What a GET of `len` bytes holds of the budget, at a target chunk of `chunk_bytes`.
pub(crate) fn budget_bytes(len: u64, chunk_bytes: u64) -> u64 {
    len.clamp(1, chunk_bytes.max(1))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Regime {
    Init,
    RampUp { no_growth: u32, last_bw: u64 },
    Stable,
    ProbeUp { since_ns: u64 },
    WarmIdle { since_ns: u64 },
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    bytes: u64,
    ttfb_ns: u64,
    done_ns: u64,
}

#[derive(Clone, Copy, Debug)]
struct Signal {
    /// Bytes completed in the window (bytes per second: the window is 1 s).
    bw_avg: u64,
    bw_hwm: u64,
    ttfb_min_ns: u64,
    ttfb_avg_ns: u64,
}

impl Signal {
    fn bdp_bytes(&self) -> u64 {
        let rtt = self.ttfb_avg_ns.min(self.ttfb_min_ns.saturating_mul(10));
        let bdp = u128::from(self.bw_hwm) * u128::from(rtt) / u128::from(WINDOW_NS);
        u64::try_from(bdp).unwrap_or(u64::MAX)
    }
}

pub(crate) struct Controller {
    init_bytes: u64,
    /// The floor (`floor_byte_budget`: the target chunk size).
    floor_bytes: u64,
    next_tick_ns: Option<u64>,
    samples: VecDeque<Sample>,
    bw_hwm: Option<u64>,
    regime: Regime,
    last_transition_ns: u64,
    budget: u64,
}

impl Controller {
    /// A controller starting from `init_bytes` (`POLARS_INFLIGHT_INIT_BYTE_BUDGET`), never
    /// under `chunk_bytes` (Polars refuses a smaller start; the model raises it).
    pub(crate) fn new(init_bytes: u64, chunk_bytes: u64) -> Controller {
        let floor_bytes = chunk_bytes.max(1);
        let init_bytes = init_bytes.max(floor_bytes);
        Controller {
            init_bytes,
            floor_bytes,
            next_tick_ns: None,
            samples: VecDeque::new(),
            bw_hwm: None,
            regime: Regime::Init,
            last_transition_ns: 0,
            budget: init_bytes,
        }
    }

    /// The store is used at `now_ns` (the controller starts at its first use; its first tick
    /// is then).
    pub(crate) fn used(&mut self, now_ns: u64) {
        if self.next_tick_ns.is_none() {
            self.next_tick_ns = Some(now_ns);
            self.last_transition_ns = now_ns;
        }
    }

    pub(crate) fn next_tick_ns(&self) -> Option<u64> {
        self.next_tick_ns
    }

    /// A budgeted GET completed.
    pub(crate) fn record(&mut self, bytes: u64, ttfb_ns: u64, done_ns: u64) {
        self.samples.push_back(Sample {
            bytes,
            ttfb_ns,
            done_ns,
        });
    }

    /// Runs every tick due by `now_ns`; returns the new budget when it changed.
    pub(crate) fn tick(&mut self, now_ns: u64) -> Option<u64> {
        let before = self.budget;
        while let Some(t) = self.next_tick_ns.filter(|t| *t <= now_ns) {
            self.tick_at(t);
            self.next_tick_ns = Some(t + TICK_NS);
        }
        (self.budget != before).then_some(self.budget)
    }

    fn tick_at(&mut self, now: u64) {
        let signal = self.signal(now);
        self.step(signal, now);
        if matches!(self.regime, Regime::WarmIdle { .. }) {
            return;
        }
        let base = match (self.regime, signal) {
            (Regime::Init, _) | (_, None) => self.init_bytes,
            (_, Some(s)) => s.bdp_bytes().max(self.init_bytes),
        };
        let gain_percent: u64 = match self.regime {
            Regime::ProbeUp { .. } => 300,
            Regime::RampUp { .. } | Regime::Stable => 200,
            Regime::Init | Regime::WarmIdle { .. } => 100,
        };
        let target = base.saturating_mul(gain_percent) / 100;
        // Resized only past a 5% change, never under the floor.
        let (t, c) = (u128::from(target), u128::from(self.budget));
        if t * 100 < c * 95 || t * 100 > c * 105 {
            self.budget = target.max(self.floor_bytes);
        }
    }

    fn signal(&mut self, now: u64) -> Option<Signal> {
        while self
            .samples
            .front()
            .is_some_and(|s| now.saturating_sub(s.done_ns) > WINDOW_NS)
        {
            self.samples.pop_front();
        }
        if self.samples.len() < MIN_SAMPLES {
            return None;
        }
        let start = now.saturating_sub(WINDOW_NS);
        let window = self
            .samples
            .iter()
            .filter(|s| s.done_ns >= start && s.done_ns <= now);
        let (mut bytes, mut n, mut ttfb_sum, mut ttfb_min) = (0u64, 0u64, 0u64, u64::MAX);
        for s in window {
            bytes += s.bytes;
            n += 1;
            ttfb_sum += s.ttfb_ns;
            ttfb_min = ttfb_min.min(s.ttfb_ns);
        }
        if n == 0 || bytes == 0 {
            return None;
        }
        let hwm = self.bw_hwm.map_or(bytes, |h| h.max(bytes));
        self.bw_hwm = Some(hwm);
        Some(Signal {
            bw_avg: bytes,
            bw_hwm: hwm,
            ttfb_min_ns: ttfb_min,
            ttfb_avg_ns: ttfb_sum / n,
        })
    }

    fn step(&mut self, signal: Option<Signal>, now: u64) {
        let Some(sig) = signal else {
            self.regime = match self.regime {
                Regime::Init => Regime::Init,
                Regime::WarmIdle { since_ns } if now - since_ns > WARM_IDLE_GRACE_NS => {
                    self.last_transition_ns = now;
                    Regime::Init
                }
                r @ Regime::WarmIdle { .. } => r,
                _ => {
                    self.last_transition_ns = now;
                    Regime::WarmIdle { since_ns: now }
                }
            };
            return;
        };
        let next = match self.regime {
            Regime::Init => Regime::RampUp {
                no_growth: 0,
                last_bw: sig.bw_avg,
            },
            Regime::RampUp { no_growth, last_bw } => {
                let growing = u128::from(sig.bw_avg) * 100 > u128::from(last_bw) * 105;
                let no_growth = if growing { 0 } else { no_growth + 1 };
                if no_growth >= RAMPUP_EXIT_ROUNDS {
                    Regime::Stable
                } else {
                    self.regime = Regime::RampUp {
                        no_growth,
                        last_bw: sig.bw_avg,
                    };
                    return;
                }
            }
            Regime::WarmIdle { .. } => Regime::Stable,
            Regime::Stable if now - self.last_transition_ns > PROBE_INTERVAL_NS => {
                Regime::ProbeUp { since_ns: now }
            }
            Regime::Stable => return,
            Regime::ProbeUp { since_ns } if now - since_ns > PROBE_DURATION_NS => Regime::Stable,
            Regime::ProbeUp { .. } => return,
        };
        self.regime = next;
        self.last_transition_ns = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_budget_stays_at_32_mib_without_five_samples_in_a_second() {
        let mut c = Controller::new(INIT_BYTE_BUDGET, CHUNK_BYTES);
        c.used(0);
        for i in 0..4 {
            c.record(MIB, 30 * MS, 50 * MS + i);
        }
        assert_eq!(c.tick(900 * MS), None);
        assert_eq!(c.budget, INIT_BYTE_BUDGET);
    }

    #[test]
    fn five_samples_ramp_up_to_twice_the_larger_of_bdp_and_32_mib() {
        let mut c = Controller::new(INIT_BYTE_BUDGET, CHUNK_BYTES);
        c.used(0);
        for i in 0..5 {
            c.record(MIB, 30 * MS, 50 * MS + i);
        }
        // The tick at 100 ms sees them: 5 MiB in the window, BDP = 5 MiB/s x 30 ms.
        assert_eq!(c.tick(100 * MS), Some(2 * INIT_BYTE_BUDGET));
        assert!(matches!(c.regime, Regime::RampUp { .. }));
        // A high bandwidth raises the BDP past 32 MiB.
        for i in 0..200 {
            c.record(8 * MIB, 30 * MS, 150 * MS + i);
        }
        let bw = 5 * MIB + 1600 * MIB;
        let bdp = bw * 30 / 1000;
        assert_eq!(c.tick(200 * MS), Some(2 * bdp));
    }

    #[test]
    fn samples_older_than_a_second_are_forgotten_and_the_regime_idles() {
        let mut c = Controller::new(INIT_BYTE_BUDGET, CHUNK_BYTES);
        c.used(0);
        for i in 0..5 {
            c.record(MIB, 30 * MS, 10 * MS + i);
        }
        c.tick(100 * MS);
        assert_eq!(c.budget, 2 * INIT_BYTE_BUDGET);
        c.tick(1200 * MS);
        assert!(
            matches!(c.regime, Regime::WarmIdle { .. }),
            "{:?}",
            c.regime
        );
        assert_eq!(c.budget, 2 * INIT_BYTE_BUDGET, "idle keeps the budget");
        c.tick(6300 * MS);
        assert_eq!(c.regime, Regime::Init);
        assert_eq!(c.budget, INIT_BYTE_BUDGET);
    }

    #[test]
    fn a_get_holds_at_most_a_chunk() {
        assert_eq!(budget_bytes(100, CHUNK_BYTES), 100);
        assert_eq!(budget_bytes(20 * MIB, CHUNK_BYTES), CHUNK_BYTES);
        assert_eq!(
            budget_bytes(20 * MIB, 32 * MIB),
            20 * MIB,
            "the chunk knob moves the cap"
        );
    }

    #[test]
    fn init_budget_follows_threads_and_chunk() {
        // `max(ceil(threads / 8), 4) x chunk`.
        assert_eq!(default_init_bytes(16, CHUNK_BYTES), INIT_BYTE_BUDGET);
        assert_eq!(default_init_bytes(32, CHUNK_BYTES), 32 * MIB);
        assert_eq!(default_init_bytes(33, CHUNK_BYTES), 40 * MIB);
        assert_eq!(default_init_bytes(64, CHUNK_BYTES), 64 * MIB);
        assert_eq!(default_init_bytes(16, 32 * MIB), 128 * MIB);
    }

    #[test]
    fn budget_floor_is_the_chunk() {
        let c = Controller::new(MIB, 16 * MIB);
        assert_eq!(
            c.budget,
            16 * MIB,
            "a start under the chunk is raised to it"
        );
    }
}
