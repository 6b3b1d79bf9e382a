//! How far the machine itself scales from one worker to all: a plain loop
//! with no query engine in it, run on the engine's own worker pool (so it
//! takes the same threads and wake-ups a query does) and timed in the same
//! rounds as each query. The suite prints its speedup beside the query's,
//! so a query that scales less than the target can be told apart from a
//! machine that, at that moment, does not scale either.
//!
//! The loop is memory-bound the way graph queries are: each worker reads
//! runs of 100 floats (one adjacency list's weights in A4) at random places
//! of a buffer of its own (64 MiB with two workers; 256 MiB in all for
//! more, 4 MiB each at least), and counts those above a threshold.

use rhizome_exec::scheduler::{ScopeOptions, WorkerPool};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Floats in each worker's buffer at most (64 MiB).
const BUFFER_FLOATS: usize = 8 << 20;
/// Floats in all workers' buffers together at most (256 MiB), so a pool of
/// many workers does not take gigabytes; each buffer keeps at least
/// [`MIN_BUFFER_FLOATS`], and together they stay far larger than a
/// last-level cache.
const TOTAL_FLOATS: usize = 32 << 20;
/// Floats in each worker's buffer at least (4 MiB).
const MIN_BUFFER_FLOATS: usize = 512 << 10;
/// Floats read in a row: one list of A4's weights.
const RUN: usize = 100;
/// Runs each worker reads per probe (about 0.3 ms on this machine).
const RUNS_PER_PROBE: usize = 1500;

/// How long the untimed probe runs before a block of timed ones last: on
/// this virtual machine a core that sat idle (through a one-worker block
/// of a long query) is slow for a while after it has work again, and a
/// single 0.3 ms lead-in run showed a speedup of 1.13 after SQ3's
/// one-worker blocks where the query itself, after its 280 ms lead-in,
/// showed 1.95.
pub const LEAD_IN: Duration = Duration::from_millis(2);

/// The probe's buffers, one per worker of the global pool.
pub struct MachineProbe {
    buffers: Vec<Arc<[f64]>>,
    pool: &'static WorkerPool,
}

impl MachineProbe {
    /// Buffers for every worker of the global pool, written once so their
    /// pages are mapped before any timing.
    pub fn new() -> MachineProbe {
        let workers = WorkerPool::global().threads().max(1);
        MachineProbe::with_buffer_floats(
            (TOTAL_FLOATS / workers).clamp(MIN_BUFFER_FLOATS, BUFFER_FLOATS),
        )
    }

    /// The probe with buffers of `floats` floats (more than [`RUN`]).
    fn with_buffer_floats(floats: usize) -> MachineProbe {
        let pool = WorkerPool::global();
        let buffers = (0..pool.threads())
            .map(|t| {
                (0..floats.max(RUN + 1))
                    .map(|i| ((i * 7 + t) % 1000) as f64 - 500.0)
                    .collect()
            })
            .collect();
        MachineProbe { buffers, pool }
    }

    /// Workers of the pool, so the most [`MachineProbe::run`] can use.
    pub fn threads(&self) -> usize {
        self.buffers.len()
    }

    /// Runs the probe on `threads` workers at once (each reads the same
    /// amount from its own buffer) and returns the wall time; `seed` picks
    /// the places read. With more workers the same time means they scaled
    /// perfectly: the speedup is `threads × time(1) / time(threads)`.
    pub fn run(&self, threads: usize, seed: u64) -> Duration {
        let threads = threads.clamp(1, self.threads());
        let scope = self.pool.open_scope(ScopeOptions {
            max_parallel: threads,
            ..ScopeOptions::default()
        });
        let _close = self.pool.close_on_drop(&scope);
        let remaining = Arc::new(AtomicUsize::new(threads));
        let start = Instant::now();
        for t in 1..threads {
            let (buffer, remaining) = (self.buffers[t].clone(), remaining.clone());
            scope.spawn(Box::new(move |_| {
                std::hint::black_box(count_runs(&buffer, seed + t as u64));
                remaining.fetch_sub(1, Ordering::AcqRel);
            }));
        }
        let (buffer, left) = (self.buffers[0].clone(), remaining.clone());
        scope.run_here(Box::new(move |_| {
            std::hint::black_box(count_runs(&buffer, seed));
            left.fetch_sub(1, Ordering::AcqRel);
        }));
        while !scope.watch(|| remaining.load(Ordering::Acquire) == 0) {
            std::thread::yield_now();
        }
        start.elapsed()
    }
}

/// Round trips of one cache line per [`core_round_trip`] measurement.
const ROUND_TRIPS: u64 = 2000;

/// How long one cache line takes to go from this thread to another and
/// back, on average over [`ROUND_TRIPS`]: two threads take turns writing
/// one counter. On the 2-vCPU virtual machine this is 50–120 ns while the
/// host runs the vCPUs on cores that share a cache, and 300–400 ns while it
/// does not; in the latter placement every line the workers share (task
/// queues, counters) costs several times more, which queries with many
/// hand-offs between workers feel. None on a machine of one core, where
/// the two threads could only take turns.
pub fn core_round_trip() -> Option<Duration> {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let ball = crate::PaddedCount::default();
    let ball = &ball.0;
    std::thread::scope(|s| {
        s.spawn(move || {
            for i in 0..ROUND_TRIPS {
                while ball.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                ball.store(2 * i + 2, Ordering::Release);
            }
        });
        // Wait for the other thread to run before timing.
        ball.store(1, Ordering::Release);
        while ball.load(Ordering::Acquire) != 2 {
            std::hint::spin_loop();
        }
        let start = Instant::now();
        for i in 1..ROUND_TRIPS {
            ball.store(2 * i + 1, Ordering::Release);
            while ball.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        }
        Some(start.elapsed() / (ROUND_TRIPS - 1) as u32)
    })
}

impl Default for MachineProbe {
    fn default() -> MachineProbe {
        MachineProbe::new()
    }
}

/// Reads [`RUNS_PER_PROBE`] runs of [`RUN`] floats at pseudo-random places
/// of `buffer` and counts the values above -1.0.
fn count_runs(buffer: &[f64], seed: u64) -> usize {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let places = (buffer.len() - RUN) as u64;
    let mut count = 0;
    for _ in 0..RUNS_PER_PROBE {
        // xorshift64: cheap, and no two runs of a probe are alike.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let at = (state % places) as usize;
        count += buffer[at..at + RUN].iter().filter(|&&x| x > -1.0).count();
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_count_what_they_read() {
        let buffer: Vec<f64> = (0..1000)
            .map(|i| if i % 2 == 0 { 1.0 } else { -2.0 })
            .collect();
        // Every run of 100 consecutive values holds 50 above -1.0.
        assert_eq!(count_runs(&buffer, 7), RUNS_PER_PROBE * RUN / 2);
    }

    #[test]
    fn a_round_trip_between_threads_is_measured() {
        if let Some(trip) = core_round_trip() {
            assert!(
                trip > Duration::ZERO && trip < Duration::from_secs(1),
                "{trip:?}"
            );
        }
    }

    #[test]
    fn a_probe_runs_on_every_worker_count_and_returns() {
        let probe = MachineProbe::with_buffer_floats(10_000);
        for threads in 1..=probe.threads() + 1 {
            assert!(probe.run(threads, threads as u64) > Duration::ZERO);
        }
    }
}
